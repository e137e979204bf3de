package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const linearizableHistory = `{"client":0,"op":"put","key":"k","input":"a","invokedAt":1000.5,"returnedAt":1001.25,"outcome":"ok","seed":"source"}
{"annotation":"cut","at":1001.5}

{"client":1,"op":"get","key":"k","output":"a","invokedAt":1002,"returnedAt":1003,"outcome":"ok","seed":"destination"}
{"client":1,"op":"put","key":"k","input":"b","invokedAt":1004,"returnedAt":1504,"outcome":"unknown","seed":"destination","error":"timeout"}
`

const staleReadHistory = `{"client":0,"op":"put","key":"k","input":"a","invokedAt":1000,"returnedAt":1001,"outcome":"ok","seed":"source"}
{"client":1,"op":"get","key":"k","output":null,"invokedAt":1002,"returnedAt":1003,"outcome":"ok","seed":"destination"}
{"annotation":"loss window","at":999,"until":1003}
`

func runOn(t *testing.T, history string, args ...string) (int, Verdict, string, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(path, []byte(history), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(append(args, path), &stdout, &stderr)
	var v Verdict
	if stdout.Len() > 0 {
		if strings.Count(stdout.String(), "\n") != 1 {
			t.Fatalf("the verdict must be one line, got %q", stdout.String())
		}
		if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
			t.Fatalf("verdict is not JSON: %q", stdout.String())
		}
	}
	return code, v, dir, stderr.String()
}

func TestRunLinearizable(t *testing.T) {
	code, v, dir, _ := runOn(t, linearizableHistory)
	if code != exitLinearizable || v.Result != "linearizable" || v.Operations != 3 || v.Clients != 2 || v.UnobservedPuts != 1 {
		t.Fatalf("exit %d, verdict %+v", code, v)
	}
	if _, err := os.Stat(filepath.Join(dir, "h.html")); !os.IsNotExist(err) || v.Visualization != "" {
		t.Fatalf("a linearizable history gets no visualization by default (%v, %q)", err, v.Visualization)
	}
}

func TestRunVisualizesAlwaysOnRequest(t *testing.T) {
	code, v, dir, _ := runOn(t, linearizableHistory, "-visualize", "always")
	if code != exitLinearizable || v.Visualization != filepath.Join(dir, "h.html") {
		t.Fatalf("exit %d, verdict %+v", code, v)
	}
	page, err := os.ReadFile(v.Visualization)
	if err != nil || !bytes.Contains(page, []byte(`put(k, \"a\")`)) {
		t.Fatalf("visualization missing or without the operation: %v", err)
	}
}

func TestRunNotLinearizableWritesTheVisualization(t *testing.T) {
	code, v, dir, _ := runOn(t, staleReadHistory)
	if code != exitNotLinearizable || v.Result != "not-linearizable" || len(v.IllegalKeys) != 1 || v.IllegalKeys[0] != "k" {
		t.Fatalf("exit %d, verdict %+v", code, v)
	}
	page, err := os.ReadFile(filepath.Join(dir, "h.html"))
	if err != nil || !bytes.Contains(page, []byte("loss window")) || !bytes.Contains(page, []byte("seed destination")) {
		t.Fatalf("visualization missing, or without the annotation and the seed: %v", err)
	}
}

func TestRunNeverVisualizes(t *testing.T) {
	code, _, dir, _ := runOn(t, staleReadHistory, "-visualize", "never")
	if _, err := os.Stat(filepath.Join(dir, "h.html")); code != exitNotLinearizable || !os.IsNotExist(err) {
		t.Fatalf("exit %d, visualization %v", code, err)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	cases := map[string]string{
		"unknown field":          `{"client":0,"op":"put","key":"k","input":"a","invokedAt":1,"returnedAt":2,"outcome":"ok","sede":"x"}`,
		"unknown op":             `{"client":0,"op":"cas","key":"k","invokedAt":1,"returnedAt":2,"outcome":"ok"}`,
		"no key":                 `{"client":0,"op":"get","invokedAt":1,"returnedAt":2,"outcome":"ok"}`,
		"put without input":      `{"client":0,"op":"put","key":"k","invokedAt":1,"returnedAt":2,"outcome":"ok"}`,
		"bad outcome":            `{"client":0,"op":"get","key":"k","invokedAt":1,"returnedAt":2,"outcome":"maybe"}`,
		"ok without return":      `{"client":0,"op":"get","key":"k","invokedAt":1,"outcome":"ok"}`,
		"returns before call":    `{"client":0,"op":"get","key":"k","invokedAt":3,"returnedAt":2,"outcome":"ok"}`,
		"negative client":        `{"client":-1,"op":"get","key":"k","invokedAt":1,"returnedAt":2,"outcome":"ok"}`,
		"output of a failed get": `{"client":0,"op":"get","key":"k","output":"a","invokedAt":1,"returnedAt":2,"outcome":"fail"}`,
		"annotation without at":  `{"annotation":"cut"}`,
		"not json":               `put k a`,
	}
	for name, line := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, _, stderr := runOn(t, linearizableHistory+line+"\n")
			if code != exitUsage || !strings.Contains(stderr, "line 6") {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "usage") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if code := run([]string{"-visualize", "sometimes", "h.jsonl"}, &stdout, &stderr); code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	if code := run([]string{filepath.Join(t.TempDir(), "missing.jsonl")}, &stdout, &stderr); code != exitUsage {
		t.Fatalf("exit %d", code)
	}
}
