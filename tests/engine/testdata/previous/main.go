// Command kib-previous runs the previous release's program, as a checkout of that release builds it, inline through
// the Automation API: `kib-previous <pulumi root> <work dir> <stack> <project> up|preview`. The upgrade test
// (tests/engine/upgrade_test.go) writes it into the previous release's tree (cmd/kib-previous) and builds it
// there, so that it compiles against that release's own packages; the stack's configuration, backend and
// stand-ins are the test's, from the work dir and the environment. It uses the program's options as that
// release's own engine test did: edit it when a release changes them.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/reach"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: kib-previous <pulumi root> <work dir> <stack> <project> up|preview")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]); err != nil {
		fmt.Fprintln(os.Stderr, "kib-previous:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root, work, name, project, op string) error {
	opts := infra.Options{BuildRouter: routerbuild.Embedded, LookPath: func(string) (string, error) { return "/usr/bin/true", nil },
		ReadConcurrency: (*mocks.Mocks)(nil).ReadConcurrency, Probe: reach.Always}
	cli, err := auto.NewPulumiCommand(&auto.PulumiCommandOptions{Root: root})
	if err != nil {
		return err
	}
	s, err := auto.UpsertStackInlineSource(ctx, name, project, infra.Program(opts), auto.Pulumi(cli), auto.WorkDir(work),
		auto.SecretsProvider("passphrase"),
		auto.Project(workspace.Project{Name: tokens.PackageName(project), Runtime: workspace.NewProjectRuntimeInfo("go", nil)}))
	if err != nil {
		return err
	}
	switch op {
	case "up":
		_, err = s.Up(ctx, optup.ProgressStreams(os.Stdout), optup.ErrorProgressStreams(os.Stderr))
	case "preview":
		_, err = s.Preview(ctx, optpreview.ProgressStreams(os.Stdout), optpreview.ErrorProgressStreams(os.Stderr))
	default:
		err = fmt.Errorf("%q: want up or preview", op)
	}
	return err
}
