// Command standin is the stand-in resource provider (package standin) of whichever package its executable names:
// installed as $PULUMI_HOME/plugins/resource-<package>-v<version>/pulumi-resource-<package>, as the engine finds
// plugins, it serves <package> at <version>. The engine starts it with its own address as the first argument
// and reads the port it serves on from its first line of output.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/pluginserve"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

func run() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	pkg, ok := strings.CutPrefix(filepath.Base(exe), "pulumi-resource-")
	if !ok {
		return fmt.Errorf("%s: not named pulumi-resource-<package>", exe)
	}
	dir := filepath.Base(filepath.Dir(exe))
	version, ok := strings.CutPrefix(dir, "resource-"+pkg+"-v")
	if !ok {
		return fmt.Errorf("%s: not in a directory resource-%s-v<version>", exe, pkg)
	}
	p := &standin.Provider{Package: pkg, Version: version, Store: &standin.Store{Dir: os.Getenv(standin.StateEnv)}}
	if p.Store.Dir == "" {
		return fmt.Errorf("%s is not set", standin.StateEnv)
	}
	if p.World, err = standin.ReadWorld(os.Getenv(standin.WorldEnv)); err != nil {
		return err
	}
	if len(os.Args) > 1 {
		if p.Engine, err = grpc.NewClient(os.Args[1], grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return fmt.Errorf("connecting to the engine: %w", err)
		}
	}
	var server pulumirpc.ResourceProviderServer = p
	if real := os.Getenv(standin.RealKubernetesEnv); real != "" && pkg == "kubernetes" && len(os.Args) > 1 {
		k, err := standin.StartRealKubernetes(p, real, os.Args[1])
		if err != nil {
			return err
		}
		defer k.Stop()
		server = k
	}
	return pluginserve.Serve(func(s *grpc.Server) { pulumirpc.RegisterResourceProviderServer(s, server) })
}
