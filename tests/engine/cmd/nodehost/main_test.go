package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRunResponse: the program's end as the real host answers it: exit code 32 a bail (the program said why, the CLI
// says nothing more), any other exit code an error naming it, a program that could not be run an error saying so, a
// clean exit nothing.
func TestRunResponse(t *testing.T) {
	run := func(script string) error { return exec.Command("sh", "-c", script).Run() }
	if r := runResponse(run("exit 32")); !r.Bail || r.Error != "" {
		t.Errorf("exit 32: %+v, want a bail", r)
	}
	for _, code := range []string{"1", "2", "31", "33"} {
		if r := runResponse(run("exit " + code)); r.Bail || r.Error != "Program exited with non-zero exit code: "+code {
			t.Errorf("exit %s: %+v, want an error naming the code", code, r)
		}
	}
	if r := runResponse(exec.Command("/nonexistent/node").Run()); r.Bail || !strings.HasPrefix(r.Error, "Problem executing program (could not run language executor): ") {
		t.Errorf("no node: %+v", r)
	}
	if r := runResponse(run("exit 0")); r.Bail || r.Error != "" {
		t.Errorf("exit 0: %+v, want nothing", r)
	}
}
