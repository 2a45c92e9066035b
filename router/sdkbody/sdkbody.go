// Package sdkbody keeps the AWS SDK from losing an answer to a race between its own request body and Go's HTTP
// transport, which on a fast peer (loopback, the emulators of make test) loses about one call in 30.
//
// smithy-go (v1.28.8 and v1.28.9, the newest the module proxy serves) hands the transport each request body wrapped
// in a reader that, once closed, answers WriteTo with io.EOF (transport/http/internal/io/safe.go), and closes it as
// soon as the transport returns the response's headers (transport/http/client.go). Go's transport, after writing
// the Content-Length bytes, reads the body on to check nothing is left (net/http/transfer.go, writeBody), with
// io.Copy, which uses WriteTo. When the answer comes back before that check has run, the check meets the closed
// body, fails with io.EOF, and the transport's write loop closes the connection while the answer's body is being
// read: the call fails with "use of closed network connection", which the SDK retries. A ReceiveMessage retried so
// has hidden the messages of the lost answer for their visibility timeout: make requeue would list nothing; a
// SendMessageBatch retried so sends its messages twice.
//
// Option gives the transport the same bytes through a reader without WriteTo: io.Copy then reads it, and a closed
// reader's Read answers (0, io.EOF), which io.Copy takes for the end it is.
package sdkbody

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Option is an API option (aws.Config.APIOptions, or a client's Options.APIOptions) for every AWS client the project
// makes.
func Option(stack *middleware.Stack) error {
	return stack.Build.Add(middleware.BuildMiddlewareFunc("sdkbody.WithoutWriteTo", withoutWriteTo), middleware.After)
}

// APIOptions is Option as config.WithAPIOptions takes it.
var APIOptions = []func(*middleware.Stack) error{Option}

// readSeeker exposes Read and Seek only: Seek for the SDK, which rewinds a body to sign it and to retry.
type readSeeker struct{ io.ReadSeeker }

func withoutWriteTo(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
	req, ok := in.Request.(*smithyhttp.Request)
	if !ok {
		return next.HandleBuild(ctx, in)
	}
	rs, ok := req.GetStream().(io.ReadSeeker)
	if !ok {
		return next.HandleBuild(ctx, in) // no body, or a stream the SDK cannot rewind: neither is what the clients here send
	}
	r, err := req.SetStream(readSeeker{rs})
	if err != nil {
		return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("sdkbody: %w", err)
	}
	in.Request = r
	return next.HandleBuild(ctx, in)
}
