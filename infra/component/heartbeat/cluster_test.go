package heartbeat

import (
	"testing"
	"time"
)

// alarms is CloudWatch's M-out-of-N rule over the latest datapoints, newest last: true when at least M of the
// last N breach.
func alarms(e Evaluation, breaching []bool) bool {
	n := 0
	for _, b := range breaching[max(0, len(breaching)-e.EvaluationPeriods):] {
		if b {
			n++
		}
	}
	return n >= e.DatapointsToAlarm
}

// TestLateDatapointsCannotPage: with Karpenter reading, the latest datapoints that have not arrived (filled as no
// deletes) and one period a beat skipped across its boundary never reach M, at any rate; with Karpenter stopped,
// the alarm fires once M periods have breached, within TimeToAlarm.
func TestLateDatapointsCannotPage(t *testing.T) {
	for _, rate := range []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute, time.Hour} {
		e := EvaluationFor(rate)
		if time.Duration(e.Late)*rate < MetricLag {
			t.Errorf("rate %s: %d late datapoints cover %s, less than the metric lag %s", rate, e.Late, time.Duration(e.Late)*rate, MetricLag)
		}
		// Reading: every period has its beat's delete, but one just across a boundary, and the latest Late periods
		// have not arrived; wherever the skipped one falls in the window.
		for skipped := range e.EvaluationPeriods {
			window := make([]bool, e.EvaluationPeriods)
			window[skipped] = true
			for i := e.EvaluationPeriods - e.Late; i < e.EvaluationPeriods; i++ {
				window[i] = true
			}
			if alarms(e, window) {
				t.Errorf("rate %s: a reading Karpenter alarms with the period %d skipped and %d late: %v", rate, skipped, e.Late, window)
			}
		}
		// Stopped after a reading history: the k-th period after the stop breaches, and so on.
		history := make([]bool, 2*e.EvaluationPeriods)
		fired := 0
		for k := 1; k <= e.EvaluationPeriods; k++ {
			history = append(history, true)
			if alarms(e, history) {
				fired = k
				break
			}
		}
		lo, hi := e.TimeToAlarm()
		if fired != e.DatapointsToAlarm || time.Duration(fired)*rate < lo || time.Duration(fired)*rate > hi {
			t.Errorf("rate %s: a stopped Karpenter alarms after %d periods, want %d, within %s to %s", rate, fired, e.DatapointsToAlarm, lo, hi)
		}
	}
}

func TestEvaluationFor(t *testing.T) {
	tests := []struct {
		rate       time.Duration
		late, m, n int
	}{
		{time.Minute, 2, 4, 5}, {2 * time.Minute, 1, 3, 4}, {5 * time.Minute, 1, 3, 4}, {time.Hour, 1, 3, 4},
	}
	for _, tt := range tests {
		if e := EvaluationFor(tt.rate); e != (Evaluation{Period: tt.rate, Late: tt.late, DatapointsToAlarm: tt.m, EvaluationPeriods: tt.n}) {
			t.Errorf("EvaluationFor(%s) = %+v, want %d late, %d of %d", tt.rate, e, tt.late, tt.m, tt.n)
		}
	}
	if NotReadingExpression() != "IF(FILL(age, 0) > 120 OR FILL(deleted, 0) == 0, 1, 0)" {
		t.Errorf("expression = %s", NotReadingExpression())
	}
}
