// Package pluginserve serves a plugin's gRPC services the way the engine starts a plugin: on a port the kernel
// chooses, printed as the first line of the plugin's output, which the engine reads, until the server stops.
package pluginserve

import (
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"google.golang.org/grpc"
)

// Serve registers the plugin's services with register, serves them and prints the port.
func Serve(register func(*grpc.Server)) error {
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{Init: func(s *grpc.Server) error {
		register(s)
		return nil
	}})
	if err != nil {
		return err
	}
	fmt.Println(handle.Port)
	return <-handle.Done
}
