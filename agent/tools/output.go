package tools

import "context"

// A running command's output as it comes (docs/reference/runtime.md,
// "Bash"): the runtime puts a sink in the call's context; Bash hands it
// every piece of output before keeping what the model gets. The sink must
// not block and must not keep p.

type outputKey struct{}

// WithOutput returns ctx carrying fn as the sink of a running command's
// output.
func WithOutput(ctx context.Context, fn func(p []byte)) context.Context {
	return context.WithValue(ctx, outputKey{}, fn)
}

// outputSink is ctx's sink, or nil.
func outputSink(ctx context.Context) func([]byte) {
	fn, _ := ctx.Value(outputKey{}).(func([]byte))
	return fn
}
