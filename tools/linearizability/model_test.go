package main

import (
	"testing"
)

func str(s string) *string   { return &s }
func num(f float64) *float64 { return &f }
func okPut(client int, key, value string, call, ret float64) Record {
	return Record{Client: client, Op: "put", Key: key, Input: value, InvokedAt: call, ReturnedAt: num(ret), Outcome: OutcomeOK, Seed: "source"}
}
func okGet(client int, key string, value *string, call, ret float64) Record {
	return Record{Client: client, Op: "get", Key: key, Output: value, InvokedAt: call, ReturnedAt: num(ret), Outcome: OutcomeOK, Seed: "source"}
}
func with(r Record, outcome Outcome) Record {
	r.Outcome = outcome
	if outcome != OutcomeOK {
		r.Output = nil
	}
	return r
}
func on(r Record, seed string) Record {
	r.Seed = seed
	return r
}

func TestRegisterStep(t *testing.T) {
	cases := []struct {
		name   string
		state  register
		input  kvInput
		output kvOutput
		legal  bool
		next   register
	}{
		{"a put sets an absent register", register{}, kvInput{Put: true, Key: "k", Value: "a"}, kvOutput{}, true, register{true, "a"}},
		{"a put overwrites", register{true, "a"}, kvInput{Put: true, Key: "k", Value: "b"}, kvOutput{}, true, register{true, "b"}},
		{"a get of an absent register answers absent", register{}, kvInput{Key: "k"}, kvOutput{}, true, register{}},
		{"a get answering a value of an absent register is illegal", register{}, kvInput{Key: "k"}, kvOutput{true, "a"}, false, register{}},
		{"a get answers the value held", register{true, "a"}, kvInput{Key: "k"}, kvOutput{true, "a"}, true, register{true, "a"}},
		{"a get answering another value is illegal", register{true, "a"}, kvInput{Key: "k"}, kvOutput{true, "b"}, false, register{true, "a"}},
		{"a get answering absent for a set register is illegal", register{true, "a"}, kvInput{Key: "k"}, kvOutput{}, false, register{true, "a"}},
		{"an empty value is not absent", register{true, ""}, kvInput{Key: "k"}, kvOutput{}, false, register{true, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			legal, next := registerModel.Step(c.state, c.input, c.output)
			if legal != c.legal || next.(register) != c.next {
				t.Fatalf("Step(%+v, %+v, %+v) = %v, %+v; want %v, %+v", c.state, c.input, c.output, legal, next, c.legal, c.next)
			}
		})
	}
}

func TestRegisterHashAgreesWithEquality(t *testing.T) {
	states := []register{{}, {true, ""}, {true, "a"}, {true, "b"}}
	for i, a := range states {
		for j, b := range states {
			same := registerModel.Hash(a) == registerModel.Hash(b)
			if i == j && !same {
				t.Fatalf("equal states %+v hash differently", a)
			}
			if i != j && same {
				t.Fatalf("states %+v and %+v share a hash (allowed, but not for these)", a, b)
			}
		}
	}
}

func TestToOperations(t *testing.T) {
	records := []Record{
		okPut(0, "k", "a", 1, 2),
		with(okPut(0, "k", "b", 3, 4), OutcomeUnknown),
		okGet(0, "k", str("b"), 5, 6),
		with(okPut(1, "k", "c", 1, 2), OutcomeFail),
		with(okGet(1, "k", nil, 3, 4), OutcomeUnknown),
		with(okGet(1, "k", nil, 5, 6), OutcomeFail),
		okGet(1, "k", nil, 7.0004, 8.0001),
	}
	ops := toOperations(records)
	if len(ops) != 4 {
		t.Fatalf("want the ok operations and the unknown put (4), got %d: %+v", len(ops), ops)
	}
	seen := ops[1]
	if seen.Input.(kvInput).Value != "b" || seen.Return != 6000 {
		t.Fatalf("an unknown put a read saw returns by that read's return, got %+v", seen)
	}
	// Client 0 continues in a new lane after its unanswered put; client 1 gets the next one.
	if lanes := []int{ops[0].ClientId, ops[1].ClientId, ops[2].ClientId, ops[3].ClientId}; lanes[0] != 0 || lanes[1] != 0 || lanes[2] != 1 || lanes[3] != 2 {
		t.Fatalf("lanes %v, want [0 0 1 2]", lanes)
	}
	// Microseconds, widened outwards.
	if ops[3].Call != 7000 || ops[3].Return != 8001 {
		t.Fatalf("get interval [%d, %d], want [7000, 8001]", ops[3].Call, ops[3].Return)
	}
	if ops[3].Output.(kvOutput).Present {
		t.Fatalf("a get answering null must read as absent")
	}
}

func TestToOperationsLeavesUnseenPutsPending(t *testing.T) {
	ops := toOperations([]Record{
		with(okPut(0, "k", "a", 1, 2), OutcomeUnknown),
		with(okPut(0, "k", "b", 3, 4), OutcomeUnknown),
		with(okPut(1, "k", "b", 3, 4), OutcomeUnknown),
		okGet(2, "k", str("b"), 5, 6),
	})
	if len(ops) != 3 {
		t.Fatalf("the put no read saw is left out, want 3 operations, got %+v", ops)
	}
	for _, op := range ops[:2] {
		if op.Input.(kvInput).Value != "b" || op.Return != pendingReturn {
			t.Fatalf("a value put twice bounds neither put, got %+v", op)
		}
	}
}
