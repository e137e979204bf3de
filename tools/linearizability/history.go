package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The history file is JSON lines, one client operation a line (see README.md beside this file):
//
//	{"client":3,"op":"put","key":"k1","input":"c3-17","invokedAt":1712.5,"returnedAt":1713.25,"outcome":"ok","seed":"source"}
//	{"client":4,"op":"get","key":"k1","output":"c3-17","invokedAt":1714,"returnedAt":1715,"outcome":"ok","seed":"destination"}
//	{"annotation":"source killed","at":1716}
//
// Times are epoch milliseconds (fractions allowed). A get's output null (or omitted) means the key was
// absent. Outcome ok: the client got an answer; fail: the operation certainly did not take effect
// (nothing was sent); unknown: the client cannot know (a timeout, a reset, an ambiguous error).

// Outcome of one operation as the client saw it.
type Outcome string

const (
	OutcomeOK      Outcome = "ok"
	OutcomeFail    Outcome = "fail"
	OutcomeUnknown Outcome = "unknown"
)

// Record is one operation line of a history file.
type Record struct {
	Line       int
	Client     int
	Op         string
	Key        string
	Input      string
	Output     *string // nil: the key was absent
	InvokedAt  float64
	ReturnedAt *float64 // required for ok; when the client gave up otherwise
	Outcome    Outcome
	Seed       string
	Error      string
	Note       string
}

// Annotation is a point or span of time the test marked (a cut, a kill, a loss window).
type Annotation struct {
	Text  string
	At    float64
	Until *float64
}

// History is a parsed history file.
type History struct {
	Records     []Record
	Annotations []Annotation
}

// line is the union of both line shapes, decoded strictly so that a misspelt field is an error.
type line struct {
	Client     *int     `json:"client"`
	Op         string   `json:"op"`
	Key        *string  `json:"key"`
	Input      *string  `json:"input"`
	Output     *string  `json:"output"`
	InvokedAt  *float64 `json:"invokedAt"`
	ReturnedAt *float64 `json:"returnedAt"`
	Outcome    Outcome  `json:"outcome"`
	Seed       string   `json:"seed"`
	Error      string   `json:"error"`
	Note       string   `json:"note"`
	Annotation *string  `json:"annotation"`
	At         *float64 `json:"at"`
	Until      *float64 `json:"until"`
}

// HistoryError names the line that is wrong and why.
type HistoryError struct {
	Line    int
	Message string
}

func (e *HistoryError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// ParseHistory reads a JSON-lines history; blank lines are skipped, anything malformed is an error.
func ParseHistory(r io.Reader) (History, error) {
	var h History
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	for scanner.Scan() {
		n++
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return h, &HistoryError{n, "not a history line: " + err.Error()}
		}
		if l.Annotation != nil {
			a, err := annotation(l)
			if err != nil {
				return h, &HistoryError{n, err.Error()}
			}
			h.Annotations = append(h.Annotations, a)
			continue
		}
		rec, err := record(l)
		if err != nil {
			return h, &HistoryError{n, err.Error()}
		}
		rec.Line = n
		h.Records = append(h.Records, rec)
	}
	if err := scanner.Err(); err != nil {
		return h, fmt.Errorf("reading history: %w", err)
	}
	return h, nil
}

func annotation(l line) (Annotation, error) {
	if l.At == nil {
		return Annotation{}, fmt.Errorf("annotation %q has no \"at\"", *l.Annotation)
	}
	if l.Until != nil && *l.Until < *l.At {
		return Annotation{}, fmt.Errorf("annotation %q ends before it starts", *l.Annotation)
	}
	return Annotation{Text: *l.Annotation, At: *l.At, Until: l.Until}, nil
}

func record(l line) (Record, error) {
	switch {
	case l.Client == nil || *l.Client < 0:
		return Record{}, fmt.Errorf("\"client\" must be a non-negative integer")
	case l.Op != "put" && l.Op != "get":
		return Record{}, fmt.Errorf("\"op\" must be put or get, got %q", l.Op)
	case l.Key == nil || *l.Key == "":
		return Record{}, fmt.Errorf("\"key\" is missing or empty")
	case l.Op == "put" && l.Input == nil:
		return Record{}, fmt.Errorf("a put needs an \"input\"")
	case l.Op == "put" && l.Output != nil:
		return Record{}, fmt.Errorf("a put has no \"output\"")
	case l.Op == "get" && l.Input != nil:
		return Record{}, fmt.Errorf("a get has no \"input\"")
	case l.Outcome != OutcomeOK && l.Outcome != OutcomeFail && l.Outcome != OutcomeUnknown:
		return Record{}, fmt.Errorf("\"outcome\" must be ok, fail or unknown, got %q", l.Outcome)
	case l.Outcome != OutcomeOK && l.Output != nil:
		return Record{}, fmt.Errorf("only an ok get has an \"output\"")
	case l.InvokedAt == nil:
		return Record{}, fmt.Errorf("\"invokedAt\" is missing")
	case l.Outcome == OutcomeOK && l.ReturnedAt == nil:
		return Record{}, fmt.Errorf("an ok operation needs \"returnedAt\"")
	case l.ReturnedAt != nil && *l.ReturnedAt < *l.InvokedAt:
		return Record{}, fmt.Errorf("\"returnedAt\" is before \"invokedAt\"")
	}
	rec := Record{
		Client: *l.Client, Op: l.Op, Key: *l.Key, Output: l.Output, InvokedAt: *l.InvokedAt, ReturnedAt: l.ReturnedAt,
		Outcome: l.Outcome, Seed: l.Seed, Error: l.Error, Note: l.Note,
	}
	if l.Input != nil {
		rec.Input = *l.Input
	}
	return rec, nil
}

// describeRecord is the operation as a person reads it, e.g. `put(k1, "c3-17")`.
func describeRecord(r Record) string {
	if r.Op == "put" {
		return fmt.Sprintf("put(%s, %q)", r.Key, r.Input)
	}
	if r.Outcome != OutcomeOK {
		return fmt.Sprintf("get(%s)", r.Key)
	}
	return fmt.Sprintf("get(%s) -> %s", r.Key, describeValue(r.Output))
}

func describeValue(v *string) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprintf("%q", *v)
}

// keysOf lists distinct keys, in first-seen order.
func keysOf(records []Record) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range records {
		if !seen[r.Key] {
			seen[r.Key] = true
			keys = append(keys, r.Key)
		}
	}
	return keys
}

// shorten keeps error texts in the visualization readable.
func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
