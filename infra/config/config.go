package config

import (
	"fmt"
	"sort"
	"strings"
)

// Error lists every problem of a configuration, one "path: reason" a line.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	return fmt.Sprintf("invalid stack configuration (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// Load reads the configuration of stack through get (a Pulumi config getter: key without namespace -> value, ""
// when unset; structured values are JSON text): it decodes every key, fills in the defaults, then validates.
func Load(stack string, get func(key string) string) (Config, error) {
	var p problems
	c := defaults(stack)
	decode(&c, get, &p)
	applyDefaults(&c)
	validate(c, &p)
	if len(p) > 0 {
		sort.Strings(p)
		return Config{}, &Error{Problems: p}
	}
	return c, nil
}
