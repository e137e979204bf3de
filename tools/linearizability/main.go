// Command linearizability checks a recorded history of client operations on key-value registers with
// Porcupine and answers whether it is linearizable.
//
//	linearizability [-visualize failure|always|never] [-out page.html] [-timeout 60s] history.jsonl
//
// It prints one JSON line (the verdict) and exits 0 when the history is linearizable, 1 when it is not,
// 2 when Porcupine timed out without an answer, 3 on bad usage or a malformed history. The HTML
// visualization goes next to the history (same name, .html) unless -out says otherwise.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	exitLinearizable    = 0
	exitNotLinearizable = 1
	exitTimeout         = 2
	exitUsage           = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("linearizability", flag.ContinueOnError)
	flags.SetOutput(stderr)
	visualize := flags.String("visualize", "failure", "when to write the HTML visualization: failure, always or never")
	out := flags.String("out", "", "path of the HTML visualization (default: the history's path with .html)")
	timeout := flags.Duration("timeout", 60*time.Second, "give up after this long (0: no limit); the verdict is then timeout")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: linearizability [-visualize failure|always|never] [-out page.html] [-timeout 60s] history.jsonl")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return exitUsage
	}
	if flags.NArg() != 1 || (*visualize != "failure" && *visualize != "always" && *visualize != "never") {
		flags.Usage()
		return exitUsage
	}
	path := flags.Arg(0)
	file, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "linearizability: %v\n", err)
		return exitUsage
	}
	h, err := ParseHistory(file)
	file.Close()
	if err != nil {
		fmt.Fprintf(stderr, "linearizability: %s: %v\n", path, err)
		return exitUsage
	}

	result := Check(h, CheckOptions{Timeout: *timeout})
	v := result.Verdict
	v.History = path
	if *visualize == "always" || (*visualize == "failure" && !v.Linearizable) {
		page := *out
		if page == "" {
			page = strings.TrimSuffix(path, filepath.Ext(path)) + ".html"
		}
		if err := result.Visualize(page); err != nil {
			fmt.Fprintf(stderr, "linearizability: writing %s: %v\n", page, err)
			return exitUsage
		}
		v.Visualization = page
	}
	line, _ := json.Marshal(v)
	fmt.Fprintln(stdout, string(line))
	switch v.Result {
	case resultLinearizable:
		return exitLinearizable
	case resultNotLinearizable:
		return exitNotLinearizable
	default:
		return exitTimeout
	}
}
