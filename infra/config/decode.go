package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// problems collects "path: reason" lines while decoding and validating.
type problems []Problem

func (p *problems) addf(path, format string, args ...any) {
	*p = append(*p, Problemf(path, format, args...))
}

// keys are the configuration's keys, Config's key tags; removed are keys that no longer exist, with why.
var (
	keys    = keyNames()
	removed = map[string]string{
		"queuePrefix": `is no longer a key: cluster queues are "<namePrefix>_<cluster>", so that none can be named as a shared queue or another stack's`,
	}
)

// decode reads values (the stack's keys in the project's namespace, without it; structured values are JSON
// text) into c, which holds the defaults: a key that is absent keeps its default. Keys it does not know are
// problems.
func decode(c *Config, values map[string]string, p *problems) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if why, gone := removed[k]; gone {
			p.addf(k, "%s", why)
		} else if !slices.Contains(keys, k) {
			p.addf(k, "unknown key%s", didYouMean(k, keys))
		}
	}
	get := func(k string) string { return values[k] }
	// Every key of its field's type, but those whose entries are decoded one by one below, so that a problem names
	// the entry: a string as it is, any other from its JSON text.
	cv := reflect.ValueOf(c).Elem()
	for _, sf := range KeyFields() {
		key := sf.Tag.Get("key")
		text := get(key)
		switch f := cv.FieldByIndex(sf.Index); {
		case text == "" || key == "clusters" || key == "accounts" || key == "organization":
		case f.Kind() == reflect.String:
			f.SetString(text)
		default:
			p.decode(key, text, f.Addr().Interface())
		}
	}
	if c.Hub != "" {
		for _, k := range HubOnlyKeys {
			if _, set := values[k]; set {
				p.addf(k, "applies to the hub only: this stack is a shard of %s (hub), which declares only its clusters; set it in the hub's stack", c.Hub)
			}
		}
	}
	if text := get("clusters"); text != "" {
		var raw []json.RawMessage
		if p.decode("clusters", text, &raw) {
			for i, r := range raw {
				var cl Cluster
				// A failed entry stays, empty, so later checks keep the indexes of the stack file.
				p.decode(fmt.Sprintf("clusters[%d]", i), string(r), &cl)
				c.Clusters = append(c.Clusters, cl)
			}
		}
	}
	if text := get("accounts"); text != "" {
		var raw map[string]json.RawMessage
		if p.decode("accounts", text, &raw) {
			c.Accounts = map[string]Account{}
			for _, id := range slices.Sorted(maps.Keys(raw)) {
				var a Account
				p.decode("accounts."+id, string(raw[id]), &a)
				c.Accounts[id] = a
			}
		}
	}
	if text := get("organization"); text != "" {
		var o Organization
		if p.decode("organization", text, &o) {
			c.Organization = &o
		}
	}
	// Whether the stack sets maximumConcurrency itself: provisioned pollers exclude it, not its default.
	var router map[string]json.RawMessage
	if json.Unmarshal([]byte(get("router")), &router) == nil {
		_, c.Router.maximumConcurrencySet = router["maximumConcurrency"]
	}
}

// decode unmarshals the JSON text of path into v, rejecting unknown keys, matched exactly (encoding/json
// alone would accept "batchsize" for "batchSize").
func (p *problems) decode(path, text string, v any) bool {
	if !p.exactKeys(path, text, v) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return true
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		p.addf(path+"."+typeErr.Field, "must be %s, not a JSON %s", kindOf(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr):
		p.addf(path, "must be %s, not a JSON %s", kindOf(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr):
		p.addf(path, "is not valid JSON: %v", err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		p.addf(path, "unknown key %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		p.addf(path, "%v", err)
	}
	return false
}

// exactKeys reports keys of the JSON object text that no json tag of the struct v points to names exactly.
func (p *problems) exactKeys(path, text string, v any) bool {
	t := reflect.TypeOf(v).Elem()
	if t.Kind() != reflect.Struct {
		return true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &obj) != nil {
		return true // not an object: decode reports it
	}
	known := map[string]bool{}
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
			known[tag] = true
		}
	}
	ok := true
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !known[k] {
			ok = false
			p.addf(path, "unknown key %q%s", k, didYouMean(k, slices.Collect(maps.Keys(known))))
		}
	}
	return ok
}

// didYouMean suggests the key of known that k misspells by case, if any.
func didYouMean(k string, known []string) string {
	for _, want := range known {
		if strings.EqualFold(want, k) {
			return fmt.Sprintf(" (did you mean %q?)", want)
		}
	}
	return ""
}

// kindOf names the JSON kind a Go type decodes from.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct, reflect.Pointer, reflect.Interface:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	default:
		return "a number"
	}
}

// KeyTypes are the Go types each key decodes into, by key: the configuration reference (docs/configuration.md)
// is generated from them and from what Load says of probe values.
func KeyTypes() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, sf := range KeyFields() {
		out[sf.Tag.Get("key")] = sf.Type
	}
	return out
}

// KeyFields are Config's fields that are keys (those with a key tag), in the reference's order: what decodes each
// key, and what the component package's Bus takes (provider/internal/argsgen).
func KeyFields() []reflect.StructField {
	var out []reflect.StructField
	for _, sf := range reflect.VisibleFields(reflect.TypeFor[Config]()) {
		if sf.Tag.Get("key") != "" {
			out = append(out, sf)
		}
	}
	return out
}

// keyNames are the configuration's keys, in the reference's order.
func keyNames() []string {
	var out []string
	for _, sf := range KeyFields() {
		out = append(out, sf.Tag.Get("key"))
	}
	return out
}

// Keys are the configuration's keys, in the order the reference lists them.
func Keys() []string { return slices.Clone(keys) }
