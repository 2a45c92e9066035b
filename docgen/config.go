package docgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
)

// The configuration reference is read off the code, not written: each key's type from the Go type it decodes
// into (config.KeyTypes), its default from what config.Load makes of a stack without it, whether it is required
// from what Load says then, a number's valid range by asking Load about values until it finds the bounds, and a
// bad value's message from Load itself. Only the probe stack below, valid as a whole, is written here.

// probeAccount is the probe stack's own account; probeMember a member account of it.
const (
	probeAccount = "111111111111"
	probeMember  = "210987654321"
)

// probe is a valid stack using every kind of entry: a cluster of each mode (and one with IRSA), a member
// account and an organization.
func probe() map[string]any {
	var v map[string]any
	_ = json.Unmarshal([]byte(`{
	  "clusters": [
	    {"name": "alpha"},
	    {"name": "beta", "mode": "existing-role", "controllerRoleName": "KarpenterController-beta"},
	    {"name": "gamma", "mode": "create", "create": {"vpcId": "vpc-0123456789abcdef0",
	      "subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"], "systemNodes": {}}},
	    {"name": "delta", "identity": "irsa",
	      "oidcProviderArn": "arn:aws:iam::111111111111:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF"},
	    {"name": "epsilon", "account": "210987654321"}
	  ],
	  "accounts": {"210987654321": {"deployRoleArn": "arn:aws:iam::210987654321:role/kib-deploy"}},
	  "organization": {"id": "o-a1b2c3d4e5"},
	  "router": {}, "centralQueue": {}, "alarms": {}, "heartbeat": {}
	}`), &v)
	return v
}

// A leaf is one key of the reference: its path as the reference writes it, the path of the probe value it sets,
// and its Go type.
type leaf struct {
	key   string // e.g. clusters[].create.subnetIds
	probe []any  // JSON path in the probe: strings for object keys, ints for list indexes
	typ   reflect.Type
}

// entryOf is the probe cluster a cluster key is read in: the entry whose mode (or identity) uses it.
func entryOf(field string) int {
	switch field {
	case "controllerRoleName":
		return 1
	case "create":
		return 2
	case "oidcProviderArn":
		return 3
	}
	return 0
}

func leaves() []leaf {
	var out []leaf
	var walk func(key string, path []any, t reflect.Type)
	walk = func(key string, path []any, t reflect.Type) {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Struct:
			for i := range t.NumField() {
				name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
				if name == "" || name == "-" {
					continue
				}
				p := slices.Clone(path)
				if len(path) == 2 && path[0] == "clusters" {
					p[1] = entryOf(name)
				}
				walk(key+"."+name, append(p, name), t.Field(i).Type)
			}
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
			walk(key+"[]", append(slices.Clone(path), 0), t.Elem())
		case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
			walk(key+".<account>", append(slices.Clone(path), probeMember), t.Elem())
		default:
			out = append(out, leaf{key: key, probe: path, typ: t})
		}
	}
	types := config.KeyTypes()
	for _, k := range config.Keys() {
		walk(k, []any{k}, types[k])
	}
	for i := range out {
		out[i].key = strings.TrimPrefix(out[i].key, ".")
	}
	return out
}

// concrete is the path Load's messages give the probe value of l (clusters[2].create.vpcId).
func (l leaf) concrete() string {
	var b strings.Builder
	for i, s := range l.probe {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

const absent = "\x00absent"

// load runs config.Load on the probe with l's value set to v (absent: removed), and returns the configuration
// and the problems Load reports about l.
func (l leaf) load(v any) (config.Config, []string) {
	doc := probe()
	set(doc, l.probe, v)
	c, err := loadProbe(doc)
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		return c, nil
	}
	var mine []string
	for _, p := range cerr.Problems {
		// l's own, its elements', or its object's as a whole (e.g. "create.systemNodes: needs min <= max").
		if path, why := p.Path, p.Reason; path == l.concrete() || strings.HasPrefix(path, l.concrete()+".") ||
			strings.HasPrefix(path, l.concrete()+"[") || len(l.probe) > 2 && strings.HasPrefix(l.concrete(), path+".") {
			mine = append(mine, why)
		}
	}
	return c, mine
}

// set puts v at path in doc, or removes it for absent.
func set(doc any, path []any, v any) {
	for i, s := range path {
		last := i == len(path)-1
		switch s := s.(type) {
		case string:
			m := doc.(map[string]any)
			if last {
				if v == absent {
					delete(m, s)
				} else {
					m[s] = v
				}
				return
			}
			if m[s] == nil {
				m[s] = map[string]any{}
			}
			doc = m[s]
		case int:
			doc = doc.([]any)[s]
		}
	}
}

// value reads l's value off a loaded configuration, following its probe path through the Go types.
func (l leaf) value(c config.Config) any {
	v := reflect.ValueOf(c)
	fieldOf := func(v reflect.Value, name string) reflect.Value {
		t := v.Type()
		for i := range t.NumField() {
			if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
				return v.Field(i)
			}
		}
		// A top-level key: Config's field of that key tag.
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("key") == name {
				return v.Field(i)
			}
		}
		return reflect.Value{}
	}
	for _, s := range l.probe {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil
			}
			v = v.Elem()
		}
		switch s := s.(type) {
		case string:
			if v.Kind() == reflect.Map {
				v = v.MapIndex(reflect.ValueOf(s))
			} else {
				v = fieldOf(v, s)
			}
		case int:
			if s >= v.Len() {
				return nil
			}
			v = v.Index(s)
		}
		if !v.IsValid() {
			return nil
		}
	}
	return v.Interface()
}

// typeName is what the reference calls a Go type.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Slice:
		return "list of " + typeName(t.Elem()) + "s"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "map of strings"
		}
		return "object"
	}
	return t.Kind().String()
}

// bad is a value Load should refuse for a key of type t, to show its message.
func bad(t reflect.Type) any {
	switch t.Kind() {
	case reflect.String:
		return "not valid!"
	case reflect.Bool:
		return "yes"
	case reflect.Slice:
		return []any{"not valid!"}
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return map[string]any{"": "x"}
		}
		return "not an object"
	}
	return "not a number"
}

// ConfigReference is the table of every configuration key.
func ConfigReference() (string, error) {
	var b strings.Builder
	b.WriteString("| key | type | default | valid values | what a bad value is told |\n|---|---|---|---|---|\n")
	if err := probeIsValid(); err != nil {
		return "", err
	}
	for _, l := range leaves() {
		def := "–"
		c, missing := l.load(absent)
		if len(missing) > 0 {
			def = "required: " + strings.Join(missing, "; ")
		} else if v := l.value(c); v != nil && (!reflect.ValueOf(v).IsZero() || l.typ.Kind() == reflect.Bool) {
			def = fmt.Sprintf("`%v`", jsonText(v))
		}
		valid := "–"
		var told []string
		if l.typ.Kind() == reflect.Int {
			lo, hi, msgs := l.bounds(c)
			if def == "–" && lo == "0" {
				def = "`0`" // a zero the key takes is its default, not an absence
			}
			valid = lo
			if hi != "" {
				valid += " to " + hi
			}
			told = msgs
		} else {
			_, told = l.load(bad(l.typ))
			if len(told) > 0 {
				told[0] = fmt.Sprintf("`%s`: %s", jsonText(bad(l.typ)), told[0])
			}
		}
		if len(told) == 0 {
			told = []string{"–"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", l.key, typeName(l.typ), escapeCell(def), valid, escapeCell(strings.Join(told, "; ")))
	}
	return b.String(), nil
}

// bounds finds the range of integers Load accepts for l around its default, and what it says past each end.
func (l leaf) bounds(c config.Config) (lo, hi string, told []string) {
	start, _ := l.value(c).(int)
	if _, p := l.load(start); len(p) > 0 {
		start = 1
	}
	ok := func(v int) bool { _, p := l.load(v); return len(p) == 0 }
	const far = 1 << 31
	search := func(valid, invalid int) int { // the last valid value between them
		for valid-invalid > 1 || invalid-valid > 1 {
			mid := valid + (invalid-valid)/2
			if ok(mid) {
				valid = mid
			} else {
				invalid = mid
			}
		}
		return valid
	}
	lo, hi = "no minimum", "no maximum"
	low, high := -far, far
	if !ok(-far) {
		v := search(start, -far)
		lo, low = fmt.Sprint(v), v
		_, p := l.load(v - 1)
		told = append(told, fmt.Sprintf("`%d`: %s", v-1, strings.Join(p, "; ")))
	}
	if !ok(far) {
		v := search(start, far)
		hi, high = fmt.Sprint(v), v
		_, p := l.load(v + 1)
		told = append(told, fmt.Sprintf("`%d`: %s", v+1, strings.Join(p, "; ")))
	}
	// Not every value between the bounds may be valid (a retention is one of a list): look at them, or at 200 of
	// them spread over a wide range.
	if low > -far && high < far {
		step := max(1, (high-low)/200)
		for v := low; v <= high; v += step {
			if !ok(v) {
				_, p := l.load(v)
				return "between " + lo + " and " + hi + ", not all", "", []string{fmt.Sprintf("`%d`: %s", v, strings.Join(p, "; "))}
			}
		}
	}
	return lo, hi, told
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// escapeCell makes s one table cell: "|" escaped everywhere, "<" and ">" outside code spans.
func escapeCell(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "|", "\\|")
		if i%2 == 0 {
			parts[i] = strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(parts[i])
		}
	}
	return strings.Join(parts, "`")
}

// probeIsValid checks that Load accepts the probe stack as a whole.
func probeIsValid() error {
	if _, err := loadProbe(probe()); err != nil {
		return fmt.Errorf("the probe stack of the configuration reference is not valid: %w", err)
	}
	return nil
}

// loadProbe runs config.Load on a probe stack, each key's value as the JSON text Pulumi passes.
func loadProbe(doc map[string]any) (config.Config, error) {
	values := map[string]string{}
	for k, x := range doc {
		b, _ := json.Marshal(x)
		values[k] = string(b)
	}
	return config.Load("stack", probeAccount, values)
}
