package docgen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Defaults are the defaults the code gives every stack key and router variable, as text: the stack keys by their
// path (router.batchSize, centralQueue.maxReceiveCount, ...) and by their last part where that is unambiguous, the
// router's variables by name (SEND_CONCURRENCY).
func Defaults() map[string]string {
	out := map[string]string{}
	short := map[string][]string{}
	add := func(prefix string, v any) {
		b, _ := json.Marshal(v)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for k, val := range m {
			switch val.(type) {
			case float64, string, bool:
				out[prefix+"."+k] = fmt.Sprint(val)
				short[k] = append(short[k], prefix+"."+k)
			}
		}
	}
	add("router", config.DefaultRouter)
	add("centralQueue", config.DefaultCentralQueue)
	add("alarms", config.DefaultAlarms)
	add("heartbeat", config.DefaultHeartbeat)
	for k, full := range short {
		if len(full) == 1 {
			out[k] = out[full[0]]
		}
	}
	for k, v := range contract.DefaultSettings.WithDefaults().Environ() {
		out[k] = v
	}
	return out
}

// defaultRE finds a stated default after a key in backquotes, in the same clause: "`key` (20 by default",
// "`key` … 5 minutes by default", "`key` (default 20".
var defaultRE = regexp.MustCompile("`([A-Za-z_.]+)`([^`|\\n]{0,80}?)(?:\\b(\\d[\\d,]*)( ?ms| ?s| ?MB| minutes?| seconds?| hours?)? by default|\\bdefaults? (?:of |is |to )?`?(\\d[\\d,]*)( ?ms| ?s| ?MB| minutes?| seconds?| hours?)?)")

// Stated is one default a hand-written page states: the key, what the page says (a number with its unit), and what
// the code says.
type Stated struct {
	Key, Says, Code string
}

// StatedDefaults are the defaults text states for keys the code has a default for, outside generated blocks, each
// with whether it agrees with the code.
func StatedDefaults(text string, defaults map[string]string) (agree, differ []Stated) {
	text = markerRE.ReplaceAllString(text, "")
	for _, m := range defaultRE.FindAllStringSubmatch(text, -1) {
		key, clause := m[1], m[2]
		if strings.Contains(clause, ". ") || strings.ContainsAny(clause, "`)") {
			continue
		}
		code, ok := defaults[key]
		if !ok {
			continue
		}
		num, unit := m[3], m[4]
		if num == "" {
			num, unit = m[5], m[6]
		}
		st := Stated{Key: key, Says: strings.TrimSpace(num + " " + strings.TrimSpace(unit)), Code: code}
		if sameDefault(num, strings.TrimSpace(unit), code) {
			agree = append(agree, st)
		} else {
			differ = append(differ, st)
		}
	}
	// A table of variables and their defaults: "| `RETRY_DELAY`, `RETRY_MAX_DELAY` | `2s`, `1m` | ...".
	for _, m := range tableRE.FindAllStringSubmatch(text, -1) {
		keys, values := backquoted(m[1]), backquoted(m[2])
		if len(values) != len(keys) {
			continue
		}
		for i, key := range keys {
			code, ok := defaults[key]
			if !ok {
				continue
			}
			st := Stated{Key: key, Says: values[i], Code: code}
			if sameValue(values[i], code) {
				agree = append(agree, st)
			} else {
				differ = append(differ, st)
			}
		}
	}
	return agree, differ
}

var (
	tableRE      = regexp.MustCompile("(?m)^\\| ((?:`[A-Z_]+`(?:, )?)+) \\| ((?:`[^`|]+`(?:, )?)+) \\|")
	backquotedRE = regexp.MustCompile("`([^`]+)`")
)

func backquoted(s string) []string {
	var out []string
	for _, m := range backquotedRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// sameValue compares a value as a page writes it with the code's: durations as durations, the rest as text.
func sameValue(says, code string) bool {
	a, errA := time.ParseDuration(says)
	b, errB := time.ParseDuration(code)
	if errA == nil && errB == nil {
		return a == b
	}
	return says == code
}

// sameDefault says whether a number with its unit is the code's default: a number, or a duration ("30s", "5m").
func sameDefault(num, unit, code string) bool {
	n, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil {
		return false
	}
	if d, err := time.ParseDuration(code); err == nil {
		scale := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "": time.Second, "second": time.Second,
			"seconds": time.Second, "minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour}[unit]
		return scale != 0 && time.Duration(n*float64(scale)) == d
	}
	c, err := strconv.ParseFloat(code, 64)
	return err == nil && c == n
}
