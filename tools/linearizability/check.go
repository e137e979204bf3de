package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is what the checker prints, as one JSON line.
type Verdict struct {
	History string `json:"history"`
	// linearizable, not-linearizable, or timeout (Porcupine gave up: no answer either way).
	Result       string `json:"result"`
	Linearizable bool   `json:"linearizable"`
	// Operations recorded (every line but annotations) and clients (distinct ids) in the file.
	Operations int `json:"operations"`
	Clients    int `json:"clients"`
	Keys       int `json:"keys"`
	// What Porcupine checked: ok operations plus the puts of unknown outcome whose value a read returned.
	Checked     int `json:"checked"`
	PendingPuts int `json:"pendingPuts"`
	// Left out: failed operations, reads that returned nothing, and puts of unknown outcome whose value
	// no read returned (UnobservedPuts of them: they cannot change the verdict, see toOperations).
	LeftOut        int `json:"leftOut"`
	UnobservedPuts int `json:"unobservedPuts"`
	// Keys whose register history has no linearization, sorted; at most maxIllegalKeys of them.
	IllegalKeys     []string `json:"illegalKeys"`
	IllegalKeyCount int      `json:"illegalKeyCount"`
	Visualization   string   `json:"visualization,omitempty"`
	CheckMs         int64    `json:"checkMs"`
}

const maxIllegalKeys = 10

const (
	resultLinearizable    = "linearizable"
	resultNotLinearizable = "not-linearizable"
	resultTimeout         = "timeout"
)

// CheckOptions tune one check.
type CheckOptions struct {
	// Zero: no limit.
	Timeout time.Duration
}

// CheckResult is the verdict plus what a visualization needs.
type CheckResult struct {
	Verdict Verdict
	info    porcupine.LinearizationInfo
}

// Check runs Porcupine over a parsed history.
func Check(h History, options CheckOptions) CheckResult {
	ops := toOperations(h.Records)
	clients := map[int]bool{}
	unknownPuts, pending := 0, 0
	for _, r := range h.Records {
		clients[r.Client] = true
		if r.Op == "put" && r.Outcome == OutcomeUnknown {
			unknownPuts++
		}
	}
	for _, op := range ops {
		if op.Metadata.(opInfo).Outcome == OutcomeUnknown {
			pending++
		}
	}
	started := time.Now()
	result, info := porcupine.CheckOperationsVerbose(registerModel, ops, options.Timeout)
	v := Verdict{
		Operations:     len(h.Records),
		Clients:        len(clients),
		Keys:           len(keysOf(h.Records)),
		Checked:        len(ops),
		PendingPuts:    pending,
		LeftOut:        len(h.Records) - len(ops),
		UnobservedPuts: unknownPuts - pending,
		IllegalKeys:    []string{},
		CheckMs:        time.Since(started).Milliseconds(),
	}
	switch result {
	case porcupine.Ok:
		v.Result, v.Linearizable = resultLinearizable, true
	case porcupine.Illegal:
		v.Result = resultNotLinearizable
		illegal := illegalKeys(ops, info)
		v.IllegalKeyCount = len(illegal)
		if len(illegal) > maxIllegalKeys {
			illegal = illegal[:maxIllegalKeys]
		}
		v.IllegalKeys = illegal
	default:
		v.Result = resultTimeout
	}
	info.AddAnnotations(annotations(h.Annotations))
	return CheckResult{Verdict: v, info: info}
}

// illegalKeys names the partitions (keys) of which no partial linearization covers every operation.
// Partitions come in partitionByKey's order, sorted by key, and so does the info Porcupine returns.
func illegalKeys(ops []porcupine.Operation, info porcupine.LinearizationInfo) []string {
	partitions := partitionByKey(ops)
	partials := info.PartialLinearizations()
	var keys []string
	for i, partition := range partitions {
		longest := 0
		if i < len(partials) {
			for _, p := range partials[i] {
				if len(p) > longest {
					longest = len(p)
				}
			}
		}
		if longest < len(partition) {
			keys = append(keys, partition[0].Input.(kvInput).Key)
		}
	}
	sort.Strings(keys)
	return keys
}

// annotations puts what the test marked (a cut, a kill, a loss window) on the visualization's timeline.
func annotations(marks []Annotation) []porcupine.Annotation {
	out := make([]porcupine.Annotation, 0, len(marks))
	for _, m := range marks {
		end := callTime(m.At)
		if m.Until != nil {
			end = returnTime(*m.Until)
		}
		out = append(out, porcupine.Annotation{
			Tag:         "test",
			Start:       callTime(m.At),
			End:         end,
			Description: m.Text,
			Details:     fmt.Sprintf("at %.3f ms (epoch)", m.At),
		})
	}
	return out
}

// Visualize writes Porcupine's HTML page of the history and its (partial) linearizations.
func (c CheckResult) Visualize(path string) error {
	return porcupine.VisualizePath(registerModel, c.info, path)
}
