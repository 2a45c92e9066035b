// Package stackconfig reads a Pulumi.<stack>.yaml file into the form the Pulumi SDK takes its configuration in
// (the PULUMI_CONFIG environment variable): "<namespace>:<key>" to a string, structured values as JSON text.
package stackconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Secret stands for a value encrypted in the stack file, which an offline render cannot decrypt.
const Secret = "[secret]"

// Load reads path; keys without a namespace get project's.
func Load(path, project string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading stack configuration: %w", err)
	}
	var file struct {
		Config map[string]any `yaml:"config"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	out := make(map[string]string, len(file.Config))
	for k, v := range file.Config {
		if !strings.Contains(k, ":") {
			k = project + ":" + k
		}
		s, err := value(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, k, err)
		}
		out[k] = s
	}
	return out, nil
}

func value(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case map[string]any:
		if _, ok := v["secure"]; ok && len(v) == 1 {
			return Secret, nil
		}
	}
	if v == nil {
		return "", nil
	}
	if _, scalar := v.(map[string]any); !scalar {
		if _, list := v.([]any); !list {
			return fmt.Sprint(v), nil // numbers and booleans, as the Pulumi CLI passes them
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Env is the PULUMI_CONFIG value for cfg.
func Env(cfg map[string]string) (string, error) {
	b, err := json.Marshal(cfg)
	return string(b), err
}

// Stack is one Pulumi.<name>.yaml of a project.
type Stack struct {
	Name string `json:"name"`
	// Example marks the documented example (key example: true), which is rendered but never previewed against
	// AWS nor deployed.
	Example bool `json:"example"`
	// Hub is the hub a shard names (key hub), "" for a hub or a stack of its own.
	Hub string `json:"hub,omitempty"`
}

// Stacks lists the stack files of the project in dir, by name, each read for its example key in the namespace of
// project.
func Stacks(dir, project string) ([]Stack, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "Pulumi.*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []Stack
	for _, p := range paths {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "Pulumi."), ".yaml")
		cfg, err := Load(p, project)
		if err != nil {
			return nil, err
		}
		example, err := parseBool(cfg[project+":example"])
		if err != nil {
			return nil, fmt.Errorf("%s: %s:example: %w", p, project, err)
		}
		out = append(out, Stack{Name: name, Example: example, Hub: cfg[project+":hub"]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Deployable are the stacks that are not examples, every hub before the shards: a shard reads its hub's outputs,
// so the deploy workflow, which updates them one at a time in this order, updates a hub first.
func Deployable(stacks []Stack) []string {
	out := []string{}
	for _, shards := range []bool{false, true} {
		for _, s := range stacks {
			if !s.Example && (s.Hub != "") == shards {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

func parseBool(s string) (bool, error) {
	switch s {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("%q is not true or false", s)
}
