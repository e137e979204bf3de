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
			text += " (may or may not have taken effect: modelled as never returning)"
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
//   - unknown put: invoked, never returned (it may or may not have taken effect);
//   - failed put: left out, it certainly did not take effect;
//   - ok get: its interval and answer;
//   - failed or unknown get: left out, a read that returned nothing constrains nothing.
//
// Visualization lanes (Porcupine's ClientId) follow the client ids, but a client whose operation never
// returned continues in a new lane, as Jepsen gives a crashed process a new id: its later operations
// would otherwise overlap the pending one.
func toOperations(records []Record) []porcupine.Operation {
	ordered := make([]Record, len(records))
	copy(ordered, records)
	sort.SliceStable(ordered, func(i, j int) bool {
		if ordered[i].Client != ordered[j].Client {
			return ordered[i].Client < ordered[j].Client
		}
		return ordered[i].InvokedAt < ordered[j].InvokedAt
	})
	var ops []porcupine.Operation
	lanes := 0
	lane := map[int]int{}
	for _, r := range ordered {
		pending := r.Op == "put" && r.Outcome == OutcomeUnknown
		if r.Outcome != OutcomeOK && !pending {
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
			Input:    kvInput{Put: r.Op == "put", Key: r.Key, Value: r.Input},
			Call:     callTime(r.InvokedAt),
			Output:   kvOutput{},
			Metadata: opInfo{Line: r.Line, Seed: r.Seed, Outcome: r.Outcome, Error: r.Error, Note: r.Note},
		}
		if pending {
			op.Return = pendingReturn
			delete(lane, r.Client) // the next operation of this client opens a new lane
		} else {
			op.Return = returnTime(*r.ReturnedAt)
		}
		if r.Op == "get" && r.Output != nil {
			op.Output = kvOutput{Present: true, Value: *r.Output}
		}
		ops = append(ops, op)
	}
	return ops
}
