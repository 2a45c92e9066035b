package engine_test

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// TestCollectEndsWhateverTheStream: the collector's results come back whether the Automation API closed the event
// channel (a stream that ran) or never did (a CLI that failed before it connected, which left a test waiting until
// go test's timeout), and hold what was sent.
func TestCollectEndsWhateverTheStream(t *testing.T) {
	t.Parallel()
	event := events.EngineEvent{EngineEvent: apitype.EngineEvent{
		ResourcePreEvent: &apitype.ResourcePreEvent{Metadata: apitype.StepEventMetadata{Op: apitype.OpCreate, URN: "urn:pulumi:s::p::aws:sqs/queue:Queue::q"}},
	}}
	for _, closedBySender := range []bool{true, false} {
		ch, done := collectAll()
		ch <- event
		if closedBySender {
			close(ch)
		}
		steps, warnings := done()
		if len(steps) != 1 || steps[0].Op != apitype.OpCreate || len(warnings) != 0 {
			t.Errorf("closed by the sender %v: steps %v, warnings %v", closedBySender, steps, warnings)
		}
	}
}
