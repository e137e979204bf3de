package main

import (
	"reflect"
	"testing"
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
		with(okPut(1, "b", "1", 0, 1), OutcomeFail),
		with(okGet(2, "b", nil, 0, 1), OutcomeUnknown),
		okGet(2, "a", str("1"), 4, 5),
	)
	want := Verdict{Result: resultLinearizable, Linearizable: true, Operations: 5, Clients: 3, Keys: 2, Checked: 3, PendingPuts: 1, LeftOut: 2, IllegalKeys: []string{}}
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
