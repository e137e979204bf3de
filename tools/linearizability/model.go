package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"

	"github.com/anishathalye/porcupine"
)

// The sequential specification: one register per key, as Porcupine's key-value example partitions its
// store. A put sets the register; a get returns what it holds, or "absent" before any put.

type kvInput struct {
	Put   bool
	Key   string
	Value string
}

// kvOutput is a get's answer; a put's output is ignored.
type kvOutput struct {
	Present bool
	Value   string
}

// register is the state of one key's register.
type register struct {
	Present bool
	Value   string
}

// opInfo travels with each operation into the visualization's tooltip.
type opInfo struct {
	Line    int
	Seed    string
	Outcome Outcome
	Error   string
	Note    string
}

var registerModel = porcupine.Model{
	Partition: partitionByKey,
	Init:      func() interface{} { return register{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(kvInput)
		st := state.(register)
		if in.Put {
			return true, register{Present: true, Value: in.Value}
		}
		out := output.(kvOutput)
		return out == kvOutput(st), st
	},
	Hash: func(state interface{}) uint64 {
		st := state.(register)
		h := fnv.New64a()
		if st.Present {
			h.Write([]byte{1})
			h.Write([]byte(st.Value))
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(kvInput)
		if in.Put {
			return fmt.Sprintf("put(%s, %q)", in.Key, in.Value)
		}
		out := output.(kvOutput)
		if !out.Present {
			return fmt.Sprintf("get(%s) -> absent", in.Key)
		}
		return fmt.Sprintf("get(%s) -> %q", in.Key, out.Value)
	},
	DescribeState: func(state interface{}) string {
		st := state.(register)
		if !st.Present {
			return "absent"
		}
		return fmt.Sprintf("%q", st.Value)
	},
	DescribeOperationMetadata: func(info interface{}) string {
		m, ok := info.(opInfo)
		if !ok {
			return ""
		}
		text := fmt.Sprintf("line %d, seed %s, outcome %s", m.Line, orDash(m.Seed), m.Outcome)
		if m.Outcome == OutcomeUnknown {
			text += " (no answer; a read returned its value, so it took effect)"
		}
		if m.Error != "" {
			text += "; " + shorten(m.Error, 160)
		}
		if m.Note != "" {
			text += "; " + m.Note
		}
		return text
	},
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// partitionByKey gives each key its own history, in key order (the order illegalKeys relies on).
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		key := op.Input.(kvInput).Key
		byKey[key] = append(byKey[key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	partitions := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		partitions = append(partitions, byKey[k])
	}
	return partitions
}

// pendingReturn is Porcupine's way of saying "never returned": an operation whose outcome is unknown
// may take effect at any point after its invocation, or not at all.
const pendingReturn int64 = math.MaxInt64

// Microseconds: the call rounded down and the return rounded up, so that an interval only ever widens.
func callTime(ms float64) int64   { return int64(math.Floor(ms * 1000)) }
func returnTime(ms float64) int64 { return int64(math.Ceil(ms * 1000)) }

// toOperations turns records into what Porcupine checks:
//   - ok put: its interval;
//   - unknown put that some ok get returned the value of: invoked, and returned by the time the first
//     such get returned (it took effect before that get did); pending, never returning, if its value
//     was put more than once or the get returned before the put was invoked (no bound is sound then);
//   - unknown put that no ok get returned the value of: left out. It may have taken effect, but then no
//     read fell between it and the next put, so the history has a linearization with it exactly when it
//     has one without it (etcd's robustness tests drop such puts too). Left in, each one is a choice
//     Porcupine must try at every step after its invocation: a stall of many such puts on a few keys
//     makes the search exponential;
//   - failed put: left out, it certainly did not take effect;
//   - ok get: its interval and answer;
//   - failed or unknown get: left out, a read that returned nothing constrains nothing.
//
// Visualization lanes (Porcupine's ClientId) follow the client ids, but a client whose put had no
// answer continues in a new lane, as Jepsen gives a crashed process a new id: its later operations
// would otherwise overlap the put.
func toOperations(records []Record) []porcupine.Operation {
	ordered := make([]Record, len(records))
	copy(ordered, records)
	sort.SliceStable(ordered, func(i, j int) bool {
		if ordered[i].Client != ordered[j].Client {
			return ordered[i].Client < ordered[j].Client
		}
		return ordered[i].InvokedAt < ordered[j].InvokedAt
	})
	seen := firstReads(records)
	puts := map[kvInput]int{}
	for _, r := range records {
		if r.Op == "put" {
			puts[kvInput{Put: true, Key: r.Key, Value: r.Input}]++
		}
	}
	var ops []porcupine.Operation
	lanes := 0
	lane := map[int]int{}
	for _, r := range ordered {
		unknownPut := r.Op == "put" && r.Outcome == OutcomeUnknown
		if r.Outcome != OutcomeOK && !unknownPut {
			continue
		}
		input := kvInput{Put: r.Op == "put", Key: r.Key, Value: r.Input}
		readAt, observed := seen[input]
		if unknownPut && !observed {
			continue
		}
		l, ok := lane[r.Client]
		if !ok {
			l = lanes
			lanes++
			lane[r.Client] = l
		}
		op := porcupine.Operation{
			ClientId: l,
			Input:    input,
			Call:     callTime(r.InvokedAt),
			Output:   kvOutput{},
			Metadata: opInfo{Line: r.Line, Seed: r.Seed, Outcome: r.Outcome, Error: r.Error, Note: r.Note},
		}
		switch {
		case !unknownPut:
			op.Return = returnTime(*r.ReturnedAt)
		case puts[input] == 1 && returnTime(readAt) >= op.Call:
			op.Return = returnTime(readAt)
		default:
			op.Return = pendingReturn
		}
		if unknownPut {
			delete(lane, r.Client) // the next operation of this client opens a new lane
		}
		if r.Op == "get" && r.Output != nil {
			op.Output = kvOutput{Present: true, Value: *r.Output}
		}
		ops = append(ops, op)
	}
	return ops
}

// firstReads maps each put (key and value) that an ok get returned to the earliest return of such a get.
func firstReads(records []Record) map[kvInput]float64 {
	seen := map[kvInput]float64{}
	for _, r := range records {
		if r.Op != "get" || r.Outcome != OutcomeOK || r.Output == nil {
			continue
		}
		put := kvInput{Put: true, Key: r.Key, Value: *r.Output}
		if at, ok := seen[put]; !ok || *r.ReturnedAt < at {
			seen[put] = *r.ReturnedAt
		}
	}
	return seen
}
