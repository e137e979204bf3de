package main

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func check(records ...Record) Verdict {
	return Check(History{Records: records}, CheckOptions{}).Verdict
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name    string
		history []Record
		illegal []string // nil: linearizable
	}{
		{
			"sequential puts and gets",
			[]Record{okGet(0, "k", nil, 0, 1), okPut(0, "k", "a", 2, 3), okGet(1, "k", str("a"), 4, 5), okPut(1, "k", "b", 6, 7), okGet(0, "k", str("b"), 8, 9)},
			nil,
		},
		{
			"a get concurrent with a put may see either value",
			[]Record{okPut(0, "k", "a", 0, 1), okPut(0, "k", "b", 2, 10), okGet(1, "k", str("a"), 3, 4), okGet(2, "k", str("b"), 5, 6), okGet(1, "k", str("b"), 11, 12)},
			nil,
		},
		{
			"intervals are closed: touching operations are concurrent",
			[]Record{okPut(0, "k", "a", 0, 5), okGet(1, "k", nil, 5, 6)},
			nil,
		},
		{
			"stale read: the destination answers the old value after the new one was acknowledged",
			[]Record{okPut(0, "k", "a", 0, 1), okPut(0, "k", "b", 2, 3), on(okGet(1, "k", str("a"), 4, 5), "destination")},
			[]string{"k"},
		},
		{
			"lost write: an acknowledged put the final read does not see",
			[]Record{okPut(0, "w1", "a", 0, 1), okPut(0, "w2", "b", 2, 3), on(okGet(9, "w1", str("a"), 10, 11), "destination"), on(okGet(9, "w2", nil, 10, 11), "destination")},
			[]string{"w2"},
		},
		{
			"a put of unknown outcome may be lost",
			[]Record{okPut(0, "k", "a", 0, 1), with(okPut(0, "k", "b", 2, 3), OutcomeUnknown), okGet(1, "k", str("a"), 10, 11)},
			nil,
		},
		{
			"a put of unknown outcome may have taken effect, even long after the client gave up",
			[]Record{okPut(0, "k", "a", 0, 1), with(okPut(0, "k", "b", 2, 3), OutcomeUnknown), okGet(1, "k", str("a"), 10, 11), okGet(1, "k", str("b"), 12, 13)},
			nil,
		},
		{
			"a put of unknown outcome took effect before the first read that saw it",
			[]Record{okPut(0, "k", "a", 0, 1), with(okPut(0, "k", "b", 2, 3), OutcomeUnknown), okGet(1, "k", str("b"), 10, 11), okPut(2, "k", "c", 12, 13), okGet(1, "k", str("c"), 14, 15)},
			nil,
		},
		{
			"a put of unknown outcome seen by one read cannot be seen again after a later put",
			[]Record{with(okPut(0, "k", "b", 2, 3), OutcomeUnknown), okGet(1, "k", str("b"), 10, 11), okPut(2, "k", "c", 12, 13), okGet(1, "k", str("b"), 14, 15)},
			[]string{"k"},
		},
		{
			"a value put twice with unknown outcomes may be seen after a later put (the retry landed late)",
			[]Record{with(okPut(0, "k", "b", 2, 3), OutcomeUnknown), with(okPut(0, "k", "b", 4, 5), OutcomeUnknown), okGet(1, "k", str("b"), 6, 7), okPut(2, "k", "c", 8, 9), okGet(1, "k", str("b"), 14, 15)},
			nil,
		},
		{
			"a read cannot see a put of unknown outcome invoked after it returned",
			[]Record{okGet(1, "k", str("b"), 0, 1), with(okPut(0, "k", "b", 2, 3), OutcomeUnknown)},
			[]string{"k"},
		},
		{
			"puts of unknown outcome that no read saw leave the verdict as it was",
			[]Record{okPut(0, "k", "a", 0, 1), with(okPut(1, "k", "x", 0.5, 3), OutcomeUnknown), okPut(0, "k", "b", 2, 3), on(okGet(2, "k", str("a"), 4, 5), "destination")},
			[]string{"k"},
		},
		{
			"a put that failed did not take effect",
			[]Record{okPut(0, "k", "a", 0, 1), with(okPut(0, "k", "b", 2, 3), OutcomeFail), okGet(1, "k", str("b"), 10, 11)},
			[]string{"k"},
		},
		{
			"split brain: both seeds accept writes, each serves its own",
			[]Record{
				on(okPut(0, "k", "s1", 0, 1), "source"),
				on(okPut(1, "k", "d1", 2, 3), "destination"),
				on(okGet(0, "k", str("s1"), 4, 5), "source"),
				on(okGet(1, "k", str("d1"), 6, 7), "destination"),
				on(okGet(0, "k", str("s1"), 8, 9), "source"),
			},
			[]string{"k"},
		},
		{
			"only the keys without a linearization are named",
			[]Record{okPut(0, "a", "1", 0, 1), okGet(1, "a", str("1"), 2, 3), okPut(0, "b", "1", 0, 1), okGet(1, "b", nil, 2, 3), okPut(0, "c", "1", 0, 1), okGet(1, "c", str("2"), 2, 3)},
			[]string{"b", "c"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := check(c.history...)
			if c.illegal == nil {
				if !v.Linearizable || v.Result != resultLinearizable || len(v.IllegalKeys) != 0 {
					t.Fatalf("want linearizable, got %+v", v)
				}
				return
			}
			if v.Linearizable || v.Result != resultNotLinearizable || !reflect.DeepEqual(v.IllegalKeys, c.illegal) || v.IllegalKeyCount != len(c.illegal) {
				t.Fatalf("want not linearizable on %v, got %+v", c.illegal, v)
			}
		})
	}
}

func TestCheckCounts(t *testing.T) {
	v := check(
		okPut(0, "a", "1", 0, 1),
		with(okPut(0, "a", "2", 2, 3), OutcomeUnknown),
		with(okPut(0, "a", "3", 6, 7), OutcomeUnknown),
		with(okPut(1, "b", "1", 0, 1), OutcomeFail),
		with(okGet(2, "b", nil, 0, 1), OutcomeUnknown),
		okGet(2, "a", str("2"), 4, 5),
	)
	want := Verdict{Result: resultLinearizable, Linearizable: true, Operations: 6, Clients: 3, Keys: 2, Checked: 3, PendingPuts: 1, LeftOut: 3, UnobservedPuts: 1, IllegalKeys: []string{}}
	v.CheckMs = 0
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("got %+v\nwant %+v", v, want)
	}
}

func TestIllegalKeysAreCapped(t *testing.T) {
	var records []Record
	for i := 0; i < maxIllegalKeys+5; i++ {
		key := string(rune('a' + i))
		records = append(records, okPut(0, key, "1", 0, 1), okGet(1, key, nil, 2, 3))
	}
	v := check(records...)
	if v.IllegalKeyCount != maxIllegalKeys+5 || len(v.IllegalKeys) != maxIllegalKeys || v.IllegalKeys[0] != "a" {
		t.Fatalf("got %d named of %d: %v", len(v.IllegalKeys), v.IllegalKeyCount, v.IllegalKeys)
	}
}

// A stall: many clients' puts on a few keys time out while no quorum answers, none of them applied. Left
// in as pending, they make Porcupine's search exponential; the check must stay quick.
func TestAStallOfUnknownPutsChecksQuickly(t *testing.T) {
	var records []Record
	at := 0.0
	for round := 0; round < 40; round++ {
		for client := 0; client < 12; client++ {
			key := string(rune('a' + client%4))
			value := fmt.Sprintf("c%d-%d", client, round)
			records = append(records, with(okPut(client, key, value, at, at+1000), OutcomeUnknown))
		}
		at += 1000
	}
	for client := 0; client < 12; client++ {
		records = append(records, okGet(client, string(rune('a'+client%4)), nil, at, at+1))
	}
	v := Check(History{Records: records}, CheckOptions{Timeout: 10 * time.Second}).Verdict
	if v.Result != resultLinearizable || v.UnobservedPuts != 480 || v.PendingPuts != 0 {
		t.Fatalf("got %+v", v)
	}
}
