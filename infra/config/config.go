package config

import (
	"fmt"
	"sort"
	"strings"
)

// Values are the keys of namespace in a Pulumi configuration (the JSON object of PULUMI_CONFIG, "<namespace>:<key>"
// to value), without the namespace.
func Values(pulumiConfig map[string]string, namespace string) map[string]string {
	out := map[string]string{}
	for k, v := range pulumiConfig {
		if key, ok := strings.CutPrefix(k, namespace+":"); ok {
			out[key] = v
		}
	}
	return out
}

// Problem is one problem of a configuration: the path of the key it is about (clusters[0].name, router.memoryMb;
// "" for none) and the reason. The program prints it as "path: reason"; the component package names the path by
// its own arguments.
type Problem struct{ Path, Reason string }

// Problemf is the problem at path, its reason formatted.
func Problemf(path, format string, args ...any) Problem {
	return Problem{Path: path, Reason: fmt.Sprintf(format, args...)}
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Reason
	}
	return p.Path + ": " + p.Reason
}

// About says whether p is about the key at path, or one within it (path's elements or fields); not one of the
// key holding path.
func (p Problem) About(path string) bool { return Within(p.Path, path) }

// Within says whether the key at path is key, or one of its elements or fields.
func Within(path, key string) bool {
	return path == key || strings.HasPrefix(path, key+".") || strings.HasPrefix(path, key+"[")
}

// Error lists every problem of a configuration, one "path: reason" a line.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return fmt.Sprintf("invalid stack configuration (%d problems):\n  %s", len(e.Problems), strings.Join(lines, "\n  "))
}

// Load reads the configuration of stack, deployed in account (the provider's, looked up), from values (the
// stack's keys in the project's namespace, without it; structured values are JSON text): it decodes every key,
// fills in the defaults, then validates.
func Load(stack, account string, values map[string]string) (Config, error) {
	return load(stack, account, values, shape{})
}

// LoadBus reads the configuration of a bus whose clusters join it from elsewhere (the component package's Bus):
// it has no clusters and no example key, and a member account needs no cluster in it.
func LoadBus(stack, account string, values map[string]string) (Config, error) {
	return load(stack, account, values, shape{clustersJoin: true})
}

// LoadJoin reads, as Load, the configuration of one cluster joining a bus as a component named component (the
// package's ClusterInterruption), whose children are named after the component rather than the cluster.
func LoadJoin(stack, account string, values map[string]string, component string) (Config, error) {
	return load(stack, account, values, shape{component: component})
}

// shape is what a load reads: a stack's configuration; with clustersJoin, a bus whose clusters are not in it
// (LoadBus); with component, the one cluster of a component of that name (LoadJoin).
type shape struct {
	clustersJoin bool
	component    string
}

// load reads the configuration of shape s.
func load(stack, account string, values map[string]string, s shape) (Config, error) {
	var p problems
	c := defaults(stack, account)
	if s.clustersJoin {
		for _, k := range []string{"clusters", "example"} {
			if _, ok := values[k]; ok {
				p.addf(k, "not an argument of a bus whose clusters join it: they join as ClusterInterruption components")
			}
		}
	}
	decode(&c, values, &p)
	applyDefaults(&c)
	validate(c, s, &p)
	if len(p) > 0 {
		sort.Slice(p, func(i, j int) bool { return p[i].String() < p[j].String() })
		return Config{}, &Error{Problems: p}
	}
	return c, nil
}
