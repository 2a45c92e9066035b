package providerrules

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// testType is a type of pulumi-aws (Checked) whose rules a test sets (withRules).
const testType = "aws:test/thing:Thing"

func withRules(t *testing.T, typ string, rules []Rule) {
	t.Helper()
	old, had := Rules[typ]
	Rules[typ] = rules
	t.Cleanup(func() {
		if had {
			Rules[typ] = old
		} else {
			delete(Rules, typ)
		}
	})
}

// echo is a check that reports the attribute it was given and the value, as it was given.
func echo(attr string, v resource.PropertyValue, _ Inputs) []string {
	return []string{attr + "=" + describe(v)}
}

func describe(v resource.PropertyValue) string {
	switch {
	case v.IsString():
		return strconv.Quote(v.StringValue())
	case v.IsNumber():
		return fmt.Sprint(v.NumberValue())
	case v.IsBool():
		return fmt.Sprint(v.BoolValue())
	case v.IsNull():
		return "null"
	case v.IsSecret():
		return "secret"
	case v.IsComputed():
		return "computed"
	case v.IsOutput():
		return "output"
	case v.IsArray():
		return fmt.Sprintf("array(%d)", len(v.ArrayValue()))
	case v.IsObject():
		return fmt.Sprintf("object(%d)", len(v.ObjectValue()))
	}
	return "other"
}

func failures(kv ...string) []Failure {
	var out []Failure
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Failure{Property: kv[i], Reason: kv[i+1]})
	}
	return out
}

func TestCheck(t *testing.T) {
	withRules(t, testType, []Rule{
		{Property: "a", Attr: "a_attr", Check: echo},
		{Property: "unchecked", Attr: "unchecked"},
		{Property: "obj.b", Attr: "obj.0.b", Check: echo},
		{Property: "list[].x", Attr: "list.#.x", Check: echo},
		{Property: "outer[].inner[].y", Attr: "outer.#.inner.#.y", Check: echo},
		{Property: "scalars[]", Attr: "scalars.#", Check: echo},
		{Property: "m.*", Attr: "m", Check: echo},
		{Property: "twice", Attr: "twice", Check: func(attr string, _ resource.PropertyValue, _ Inputs) []string {
			return []string{"one of " + attr, "two of " + attr}
		}},
		{Property: "c", Attr: "c", Check: ConflictsWith(map[string]string{"a": "a_attr"})},
	})
	o := obj
	for _, c := range []struct {
		name string
		in   resource.PropertyMap
		want []Failure
	}{
		{name: "nothing set", in: resource.PropertyMap{}},
		{name: "a scalar", in: resource.PropertyMap{"a": str("x")}, want: failures("a", `a_attr="x"`)},
		{name: "unknown: skipped", in: resource.PropertyMap{"a": unknown}},
		{name: "unknown output: skipped", in: resource.PropertyMap{"a": unknownOutput}},
		{name: "secret unknown: skipped", in: resource.PropertyMap{"a": secret(unknown)}},
		{name: "null: skipped", in: resource.PropertyMap{"a": null()}},
		{name: "secret: unwrapped", in: resource.PropertyMap{"a": secret(str("s"))}, want: failures("a", `a_attr="s"`)},
		{name: "known output: unwrapped", in: resource.PropertyMap{"a": output(num(3))}, want: failures("a", "a_attr=3")},
		{name: "secret known output: unwrapped", in: resource.PropertyMap{"a": secret(output(secret(boolean(true))))}, want: failures("a", "a_attr=true")},
		{name: "a rule without a check", in: resource.PropertyMap{"unchecked": str("anything")}},
		{name: "an unset nested property", in: resource.PropertyMap{"obj": o(resource.PropertyMap{})}},
		{name: "a nested property", in: resource.PropertyMap{"obj": o(resource.PropertyMap{"b": str("z")})}, want: failures("obj.b", `obj.0.b="z"`)},
		{name: "a nested property in a secret", in: resource.PropertyMap{"obj": secret(o(resource.PropertyMap{"b": str("z")}))},
			want: failures("obj.b", `obj.0.b="z"`)},
		{name: "a nested property under a scalar", in: resource.PropertyMap{"obj": str("z")}},
		{name: "list elements, each with its index", in: resource.PropertyMap{"list": arr(
			o(resource.PropertyMap{"x": str("p")}),
			o(resource.PropertyMap{"y": str("no x")}),
			o(resource.PropertyMap{"x": unknown}),
			secret(o(resource.PropertyMap{"x": str("q")})),
			str("not an object"),
		)}, want: failures("list[0].x", `list.0.x="p"`, "list[3].x", `list.3.x="q"`)},
		{name: "a secret list", in: resource.PropertyMap{"list": secret(arr(o(resource.PropertyMap{"x": num(1)})))},
			want: failures("list[0].x", "list.0.x=1")},
		{name: "a known output list", in: resource.PropertyMap{"list": output(arr(o(resource.PropertyMap{"x": num(1)}), o(resource.PropertyMap{"x": num(2)})))},
			want: failures("list[0].x", "list.0.x=1", "list[1].x", "list.1.x=2")},
		{name: "an unknown list", in: resource.PropertyMap{"list": unknown}},
		{name: "not a list", in: resource.PropertyMap{"list": o(resource.PropertyMap{"x": str("p")})}},
		{name: "a list in a list's element that is no object", in: resource.PropertyMap{"outer": arr(str("x"), o(resource.PropertyMap{"inner": str("y")}))}},
		{name: "lists in lists", in: resource.PropertyMap{"outer": arr(
			o(resource.PropertyMap{"inner": arr(o(resource.PropertyMap{"y": num(1)}))}),
			o(resource.PropertyMap{"inner": arr(o(resource.PropertyMap{"y": num(2)}), o(resource.PropertyMap{"y": num(3)}))}),
		)}, want: failures(
			"outer[0].inner[0].y", "outer.0.inner.0.y=1",
			"outer[1].inner[0].y", "outer.1.inner.0.y=2",
			"outer[1].inner[1].y", "outer.1.inner.1.y=3")},
		{name: "scalar elements", in: resource.PropertyMap{"scalars": arr(str("s0"), unknown, null(), str("s3"), unknownOutput)},
			want: failures("scalars[0]", `scalars.0="s0"`, "scalars[3]", `scalars.3="s3"`)},
		{name: "map entries", in: resource.PropertyMap{"m": o(resource.PropertyMap{"k2": str("v2"), "k1": secret(str("v1"))})},
			want: failures("m.k1", `m="v1"`, "m.k2", `m="v2"`)},
		{name: "a map that is not", in: resource.PropertyMap{"m": str("v")}},
		{name: "every reason", in: resource.PropertyMap{"twice": str("t")}, want: failures("twice", "one of twice", "twice", "two of twice")},
		{name: "the rules read the inputs", in: resource.PropertyMap{"c": str("c")}},
		{name: "the rules read the inputs: a conflict", in: resource.PropertyMap{"c": str("c"), "a": str("x")}, want: failures(
			"a", `a_attr="x"`,
			"c", `Conflicting configuration arguments. "c": conflicts with a_attr`)},
		{name: "in the rules' order", in: resource.PropertyMap{
			"twice": str("t"), "scalars": arr(str("s")), "a": str("x"), "obj": o(resource.PropertyMap{"b": str("z")}),
		}, want: failures(
			"a", `a_attr="x"`,
			"obj.b", `obj.0.b="z"`,
			"scalars[0]", `scalars.0="s"`,
			"twice", "one of twice",
			"twice", "two of twice")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Check(testType, c.in); !slices.Equal(got, c.want) {
				t.Errorf("Check =\n%v\nwant\n%v", got, c.want)
			}
		})
	}
	if got := Check("aws:test/none:None", resource.PropertyMap{"a": str("x")}); got != nil {
		t.Errorf("a type without rules: %v", got)
	}
}

func TestInputsSet(t *testing.T) {
	in := Inputs{resource.PropertyMap{
		"unknown":       unknown,
		"unknownOutput": unknownOutput,
		"null":          null(),
		"empty":         str(""),
		"string":        str("x"),
		"emptyList":     arr(),
		"list":          arr(str("x")),
		"emptyObject":   obj(resource.PropertyMap{}),
		"object":        obj(resource.PropertyMap{"inner": num(1), "zero": num(0)}),
		"false":         boolean(false),
		"true":          boolean(true),
		"zero":          num(0),
		"one":           num(1),
		"negative":      num(-1),
		"secretEmpty":   secret(str("")),
		"secretString":  secret(str("x")),
		"outputZero":    output(num(0)),
		"outputOne":     output(num(1)),
		"secretObject":  secret(obj(resource.PropertyMap{"inner": boolean(true)})),
		"reference":     resource.MakeComponentResourceReference("urn:pulumi:dev::p::t::n", ""),
	}}
	for path, want := range map[string]bool{
		"absent":              false,
		"unknown":             true,
		"unknownOutput":       true,
		"null":                false,
		"empty":               false,
		"string":              true,
		"emptyList":           false,
		"list":                true,
		"emptyObject":         false,
		"object":              true,
		"false":               false,
		"true":                true,
		"zero":                false,
		"one":                 true,
		"negative":            true,
		"secretEmpty":         false,
		"secretString":        true,
		"outputZero":          false,
		"outputOne":           true,
		"object.inner":        true,
		"object.zero":         false,
		"object.absent":       false,
		"secretObject.inner":  true,
		"string.inner":        false,
		"reference":           true,
		"object.inner.deeper": false,
	} {
		if got := in.Set(path); got != want {
			t.Errorf("Set(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestPaths(t *testing.T) {
	inputs := resource.PropertyMap{
		"a":                     num(1),
		"b":                     obj(resource.PropertyMap{"c": str("x"), "d": obj(resource.PropertyMap{}), "e": arr()}),
		"f":                     arr(str("x"), str("y")),
		"g":                     arr(obj(resource.PropertyMap{"h": num(1)}), obj(resource.PropertyMap{"i": num(2)}), obj(resource.PropertyMap{"h": num(3)})),
		"tags":                  obj(resource.PropertyMap{"team": str("x"), "owner": str("y")}),
		"nodeSecurityGroupTags": obj(resource.PropertyMap{"k": str("v")}),
		"environment":           obj(resource.PropertyMap{"variables": obj(resource.PropertyMap{"LOG_LEVEL": str("info")})}),
		"parameters":            obj(resource.PropertyMap{"P": str("1")}),
		"labels":                obj(resource.PropertyMap{"l": obj(resource.PropertyMap{"x": num(1)})}),
		"tagsAll":               obj(resource.PropertyMap{"t": str("v")}),
		"emptyTags":             obj(resource.PropertyMap{}),
		"n":                     null(),
		"u":                     unknown,
		"s":                     secret(obj(resource.PropertyMap{"inner": str("x")})),
		"o":                     output(arr(str("x"))),
	}
	want := []string{
		"a", "b.c", "b.d", "b.e", "emptyTags", "environment.variables.*", "f[]", "g[].h", "g[].i", "labels.*.x",
		"n", "nodeSecurityGroupTags.*", "o[]", "parameters.*", "s.inner", "tags.*", "tagsAll.*", "u",
	}
	if got := Paths(inputs); !slices.Equal(got, want) {
		t.Errorf("Paths =\n%q\nwant\n%q", got, want)
	}
	if got := Paths(resource.PropertyMap{}); got != nil {
		t.Errorf("Paths of no inputs = %q", got)
	}
	if got := Paths(nil); got != nil {
		t.Errorf("Paths of nil = %q", got)
	}
}

func TestIsMap(t *testing.T) {
	for k, want := range map[string]bool{
		"tags": true, "tagsAll": true, "nodeSecurityGroupTags": true, "Tags": true, "variables": true, "parameters": true, "labels": true,
		"tag": false, "tagsX": false, "name": false, "parameterOverrides": false, "label": false, "": false,
	} {
		if got := isMap(k); got != want {
			t.Errorf("isMap(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestCoveredBy(t *testing.T) {
	covered := map[string]bool{"a": true, "b.c": true, "list": true, "sub[].x": true, "elems[]": true, "tags": true}
	for p, want := range map[string]bool{
		"a":             true,
		"a.x":           true, // a parent's rule covers
		"a.x.y":         true,
		"b.c":           true,
		"b.c[]":         true,
		"b.d":           false,
		"b":             false, // a child's rule does not cover its parent
		"list[]":        true,  // a list's rule covers its elements
		"list[].x":      true,
		"sub[].x":       true,
		"sub[].y":       false,
		"sub[]":         false,
		"sub":           false,
		"elems[]":       true,
		"elems[].z":     true,
		"tags.*":        true,
		"zz":            false,
		"x.list[]":      false,
		"x.a":           false,
		"aa":            false,
		"listing[]":     false,
		"b.c.d[].e[]":   true,
		"unrelated.b.c": false,
	} {
		if got := coveredBy(covered, p); got != want {
			t.Errorf("coveredBy(%q) = %v, want %v", p, got, want)
		}
	}
	// A path's first segment empty (as a top-level map entry's path, ".k") is held by the empty path.
	if !coveredBy(map[string]bool{"": true}, ".k") {
		t.Error(`coveredBy(".k") with a rule of "": false`)
	}
	if coveredBy(map[string]bool{"": true}, "k") {
		t.Error(`coveredBy("k") with a rule of "": true`)
	}
}

func TestUncovered(t *testing.T) {
	withRules(t, testType, []Rule{
		{Property: "a", Attr: "a"},
		{Property: "list", Attr: "list"},
		{Property: "rules[].x", Attr: "rule.#.x"},
		{Property: "tags", Attr: "tags"},
	})
	inputs := resource.PropertyMap{
		"a":     obj(resource.PropertyMap{"deep": str("x")}),
		"list":  arr(str("1"), str("2")),
		"rules": arr(obj(resource.PropertyMap{"x": num(1), "y": num(2)}), obj(resource.PropertyMap{"y": num(3), "z": num(4)})),
		"tags":  obj(resource.PropertyMap{"k": str("v")}),
		"other": str("o"),
		"b":     arr(),
	}
	if got, want := Uncovered(testType, inputs), []string{"b", "other", "rules[].y", "rules[].z"}; !slices.Equal(got, want) {
		t.Errorf("Uncovered = %q, want %q", got, want)
	}
	if got := Uncovered(testType, resource.PropertyMap{"a": str("x")}); got != nil {
		t.Errorf("Uncovered of covered inputs = %q", got)
	}
	if got, want := Uncovered("aws:test/none:None", inputs), Paths(inputs); !slices.Equal(got, want) {
		t.Errorf("Uncovered of a type without rules = %q, want every path %q", got, want)
	}
}

func TestFailureString(t *testing.T) {
	if got := (Failure{Property: "rules[0].x", Reason: "bad"}).String(); got != "rules[0].x: bad" {
		t.Errorf("Failure.String = %q", got)
	}
}

func TestProblemAndReason(t *testing.T) {
	f := Failure{Property: "maxMessageSize", Reason: "expected max_message_size to be in the range (1024 - 262144), got 1"}
	if got, want := Reason("central", f),
		"expected max_message_size to be in the range (1024 - 262144), got 1. Examine values at 'central.maxMessageSize'."; got != want {
		t.Errorf("Reason =\n%s\nwant\n%s", got, want)
	}
	if got, want := Problem("aws:sqs/queue:Queue", "central", f),
		"aws:sqs/queue:Queue resource 'central' has a problem: expected max_message_size to be in the range (1024 - 262144), got 1. "+
			"Examine values at 'central.maxMessageSize'."; got != want {
		t.Errorf("Problem =\n%s\nwant\n%s", got, want)
	}
	g := Failure{Property: "rules[1].bucketKeyEnabled", Reason: "r"}
	if got, want := Problem("t:m:T", "n", g), "t:m:T resource 'n' has a problem: r. Examine values at 'n.rules[1].bucketKeyEnabled'."; got != want {
		t.Errorf("Problem = %q, want %q", got, want)
	}
}

func TestRefuse(t *testing.T) {
	withRules(t, testType, []Rule{
		{Property: "size", Attr: "size", Check: IntBetween(1, 2)},
		{Property: "name", Attr: "name"},
	})
	err := Refuse(testType, "thing", resource.PropertyMap{"size": num(3), "name": str("n"), "extra": str("e"), "more": num(1)})
	want := "aws:test/thing:Thing resource 'thing' has a problem: expected size to be in the range (1 - 2), got 3. Examine values at 'thing.size'.\n" +
		"aws:test/thing:Thing resource 'thing' sets extra, which no rule of offline/providerrules covers: read what its provider checks of it " +
		"(its file and schema field) and add a rule\n" +
		"aws:test/thing:Thing resource 'thing' sets more, which no rule of offline/providerrules covers: read what its provider checks of it " +
		"(its file and schema field) and add a rule"
	if err == nil || err.Error() != want {
		t.Errorf("Refuse =\n%v\nwant\n%s", err, want)
	}
	if err := Refuse(testType, "thing", resource.PropertyMap{"size": num(3)}); err == nil ||
		err.Error() != "aws:test/thing:Thing resource 'thing' has a problem: expected size to be in the range (1 - 2), got 3. Examine values at 'thing.size'." {
		t.Errorf("Refuse of a failure alone = %v", err)
	}
	if err := Refuse(testType, "thing", resource.PropertyMap{"extra": str("e")}); err == nil ||
		err.Error() != "aws:test/thing:Thing resource 'thing' sets extra, which no rule of offline/providerrules covers: read what its provider checks of it "+
			"(its file and schema field) and add a rule" {
		t.Errorf("Refuse of an uncovered property alone = %v", err)
	}
	if err := Refuse(testType, "thing", resource.PropertyMap{"size": num(2), "name": str("n")}); err != nil {
		t.Errorf("Refuse of clean inputs = %v", err)
	}
	if err := Refuse(testType, "thing", resource.PropertyMap{}); err != nil {
		t.Errorf("Refuse of no inputs = %v", err)
	}
	if err := Refuse("kubernetes:helm.sh/v3:Release", "r", resource.PropertyMap{"size": num(3), "extra": str("e")}); err != nil {
		t.Errorf("Refuse of a type not Checked = %v", err)
	}
	if err := Refuse("aws:test/none:None", "n", resource.PropertyMap{"x": str("e")}); err == nil ||
		!strings.Contains(err.Error(), "aws:test/none:None resource 'n' sets x, which no rule") {
		t.Errorf("Refuse of a Checked type without rules = %v", err)
	}
}

func TestChecked(t *testing.T) {
	for typ, want := range map[string]bool{
		"aws:sqs/queue:Queue":           true,
		"aws:eks/cluster:Cluster":       true,
		"eks:index:Cluster":             true,
		"eks:index:ManagedNodeGroup":    true,
		"pulumi:providers:aws":          true,
		"pulumi:providers:eks":          false,
		"pulumi:providers:kubernetes":   false,
		"awsx:ec2:Vpc":                  false,
		"aws-native:sqs:Queue":          false,
		"kubernetes:helm.sh/v3:Release": false,
		"pulumi:pulumi:Stack":           false,
		"":                              false,
	} {
		if got := Checked(typ); got != want {
			t.Errorf("Checked(%q) = %v, want %v", typ, got, want)
		}
	}
}

// sourceFile is a file of the providers' sources a rule's Source cites: terraform-provider-aws's (internal/...go) or
// pulumi-eks's (nodejs/eks/...ts).
var sourceFile = regexp.MustCompile(`(^|[\s(])(internal/[0-9A-Za-z_./-]*[0-9A-Za-z_]\.go|nodejs/eks/[0-9A-Za-z_./-]*[0-9A-Za-z_]\.ts)\b`)

func TestRulesAreComplete(t *testing.T) {
	if len(Rules) == 0 {
		t.Fatal("no rules")
	}
	for typ, rules := range Rules {
		if !Checked(typ) {
			t.Errorf("%s: a type Refuse does not check", typ)
		}
		if len(rules) == 0 {
			t.Errorf("%s: no rules", typ)
		}
		seen := map[string]bool{}
		for i, r := range rules {
			if r.Property == "" || r.Attr == "" || r.Source == "" {
				t.Errorf("%s rule %d (%q): Property %q, Attr %q, Source %q: each must be given", typ, i, r.Property, r.Property, r.Attr, r.Source)
			}
			if seen[r.Property] {
				t.Errorf("%s: two rules of %s", typ, r.Property)
			}
			seen[r.Property] = true
			if !sourceFile.MatchString(r.Source) {
				t.Errorf("%s %s: Source names no file of the provider's source: %q", typ, r.Property, r.Source)
			}
			if n, m := strings.Count(r.Property, "[]"), strings.Count(r.Attr, "#"); n != m {
				t.Errorf("%s %s: %d \"[]\" in the Property, %d \"#\" in the Attr %q", typ, r.Property, n, m, r.Attr)
			}
		}
	}
}

func TestSourceFilePattern(t *testing.T) {
	for s, want := range map[string]bool{
		"internal/service/sqs/queue.go, max_message_size: ...":     true,
		"x (internal/verify/validate.go)":                          true,
		"nodejs/eks/cluster.ts, createCore: ...":                   true,
		"internal/service/eks/node_group.go instance_types: ...":   true,
		", tags: tftags.TagsSchema() (internal/tags: TypeMap ...)": false,
		"no file":                  false,
		"internal/service/sqs/":    false,
		"nodejs/eks/cluster.go, x": false,
	} {
		if got := sourceFile.MatchString(s); got != want {
			t.Errorf("sourceFile(%q) = %v, want %v", s, got, want)
		}
	}
}

// The provider's own validators, each through the rule of a type that has it: a value that passes, and one that the
// provider refuses, with its message.

type ruleRow struct {
	name string
	in   resource.PropertyMap
	want []Failure
}

func rulesTable(t *testing.T, typ string, rows []ruleRow) {
	t.Helper()
	if _, ok := Rules[typ]; !ok {
		t.Fatalf("no rules of %s", typ)
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := Check(typ, r.in); !slices.Equal(got, r.want) {
				t.Errorf("Check(%s) =\n%q\nwant\n%q", typ, got, r.want)
			}
		})
	}
}

func TestIAMResourceName(t *testing.T) {
	rulesTable(t, "aws:iam/role:Role", []ruleRow{
		{name: "64 characters", in: resource.PropertyMap{"name": str(strings.Repeat("a", 64))}},
		{name: "the characters", in: resource.PropertyMap{"name": str("a_+=,.@-z")}},
		{name: "65 characters", in: resource.PropertyMap{"name": str(strings.Repeat("a", 65))}, want: failures(
			"name", "expected length of name to be in the range (1 - 64), got "+strings.Repeat("a", 65))},
		{name: "empty", in: resource.PropertyMap{"name": str("")}, want: failures(
			"name", "expected length of name to be in the range (1 - 64), got ")},
		{name: "a space", in: resource.PropertyMap{"name": str("a b")}, want: failures("name", `invalid value for name (must match [\w+=,.@-])`)},
		{name: "beside namePrefix: the conflict alone", in: resource.PropertyMap{"name": str("a b"), "namePrefix": str("p")}, want: failures(
			"name", `Conflicting configuration arguments. "name": conflicts with name_prefix`)},
	})
	rulesTable(t, "aws:iam/rolePolicy:RolePolicy", []ruleRow{
		{name: "128 characters", in: resource.PropertyMap{"name": str(strings.Repeat("a", 128))}},
		{name: "129 characters", in: resource.PropertyMap{"name": str(strings.Repeat("a", 129))}, want: failures(
			"name", "expected length of name to be in the range (1 - 128), got "+strings.Repeat("a", 129))},
	})
}

func TestIAMRolePolicyRole(t *testing.T) {
	const arn = "arn:aws:iam::123456789012:role/worker"
	rulesTable(t, "aws:iam/rolePolicy:RolePolicy", []ruleRow{
		{name: "a name", in: resource.PropertyMap{"role": str("worker")}},
		{name: "a name that is no ARN", in: resource.PropertyMap{"role": str("arn:aws:iam")}},
		{name: "an ARN", in: resource.PropertyMap{"role": str(arn)}, want: failures("role", `"role" must be the role's name not its ARN`)},
		{name: "128 characters", in: resource.PropertyMap{"role": str(strings.Repeat("r", 128))}},
		{name: "129 characters", in: resource.PropertyMap{"role": str(strings.Repeat("r", 129))}, want: failures(
			"role", "expected length of role to be in the range (1 - 128), got "+strings.Repeat("r", 129))},
		{name: "no word character", in: resource.PropertyMap{"role": str("!")}, want: failures(
			"role", `expected value of role to match regular expression "[\\w+=,.@-]+", got !`)},
		{name: "empty: every check", in: resource.PropertyMap{"role": str("")}, want: failures(
			"role", "expected length of role to be in the range (1 - 128), got ",
			"role", `expected value of role to match regular expression "[\\w+=,.@-]+", got `,
			"role", `"role" must be the role's name not its ARN`)},
	})
}

func TestEventsName(t *testing.T) {
	long := strings.Repeat("r", 65)
	rulesTable(t, "aws:cloudwatch/eventTarget:EventTarget", []ruleRow{
		{name: "64 characters", in: resource.PropertyMap{"rule": str(strings.Repeat("r", 64)), "targetId": str("a.b_c-D9")}},
		{name: "65 characters", in: resource.PropertyMap{"rule": str(long)}, want: failures(
			"rule", fmt.Sprintf("%q cannot be longer than 64 characters: %q", "rule", long))},
		{name: "a space", in: resource.PropertyMap{"targetId": str("a b")}, want: failures(
			"targetId", `"target_id" doesn't comply with restrictions ("^[0-9A-Za-z_.-]+$"): "a b"`)},
		{name: "empty", in: resource.PropertyMap{"targetId": str("")}, want: failures(
			"targetId", `"target_id" doesn't comply with restrictions ("^[0-9A-Za-z_.-]+$"): ""`)},
		{name: "both", in: resource.PropertyMap{"rule": str(long + "/")}, want: failures(
			"rule", fmt.Sprintf("%q cannot be longer than 64 characters: %q", "rule", long+"/"),
			"rule", fmt.Sprintf(`"rule" doesn't comply with restrictions ("^[0-9A-Za-z_.-]+$"): %q`, long+"/"))},
		{name: "not a string", in: resource.PropertyMap{"rule": num(1)}, want: failures("rule", "expected type of rule to be string")},
	})
	rulesTable(t, "aws:cloudwatch/eventRule:EventRule", []ruleRow{
		{name: "a name", in: resource.PropertyMap{"name": str("interruptions")}},
		{name: "a colon", in: resource.PropertyMap{"name": str("a:b")}, want: failures(
			"name", `"name" doesn't comply with restrictions ("^[0-9A-Za-z_.-]+$"): "a:b"`)},
	})
}

func TestDashboardName(t *testing.T) {
	rulesTable(t, "aws:cloudwatch/dashboard:Dashboard", []ruleRow{
		{name: "255 characters", in: resource.PropertyMap{"dashboardName": str(strings.Repeat("d", 255))}},
		{name: "256 characters", in: resource.PropertyMap{"dashboardName": str(strings.Repeat("d", 256))}, want: failures(
			"dashboardName", fmt.Sprintf("%q cannot be longer than 255 characters: %q", "dashboard_name", strings.Repeat("d", 256)))},
		{name: "a dot", in: resource.PropertyMap{"dashboardName": str("a.b")}, want: failures(
			"dashboardName", `"dashboard_name" doesn't comply with restrictions ("^[0-9A-Za-z_-]+$"): "a.b"`)},
	})
}

func TestLogGroupName(t *testing.T) {
	rulesTable(t, "aws:cloudwatch/logGroup:LogGroup", []ruleRow{
		{name: "512 characters", in: resource.PropertyMap{"name": str("/aws/lambda/" + strings.Repeat("l", 500))}},
		{name: "513 characters", in: resource.PropertyMap{"name": str(strings.Repeat("l", 513))}, want: failures(
			"name", fmt.Sprintf("%q cannot be longer than 512 characters: %q", "name", strings.Repeat("l", 513)))},
		{name: "a space", in: resource.PropertyMap{"name": str("a b")}, want: failures(
			"name", `"name" isn't a valid log group name (alphanumeric characters, underscores, hyphens, slashes, hash signs and dots are allowed): "a b"`)},
	})
}

func TestEKSClusterName(t *testing.T) {
	rulesTable(t, "aws:eks/accessEntry:AccessEntry", []ruleRow{
		{name: "100 characters", in: resource.PropertyMap{"clusterName": str(strings.Repeat("c", 100))}},
		{name: "the characters", in: resource.PropertyMap{"clusterName": str("0a_B-")}},
		{name: "one character", in: resource.PropertyMap{"clusterName": str("c")}},
		{name: "101 characters", in: resource.PropertyMap{"clusterName": str(strings.Repeat("c", 101))}, want: failures(
			"clusterName", fmt.Sprintf(`"cluster_name" length must be between 1-100 characters: %q`, strings.Repeat("c", 101)))},
		{name: "a leading hyphen", in: resource.PropertyMap{"clusterName": str("-c")}, want: failures(
			"clusterName", `"cluster_name" doesn't comply with restrictions ("^[0-9A-Za-z][0-9A-Za-z_-]*$"): "-c"`)},
		{name: "empty: both", in: resource.PropertyMap{"clusterName": str("")}, want: failures(
			"clusterName", `"cluster_name" length must be between 1-100 characters: ""`,
			"clusterName", `"cluster_name" doesn't comply with restrictions ("^[0-9A-Za-z][0-9A-Za-z_-]*$"): ""`)},
		{name: "not a string", in: resource.PropertyMap{"clusterName": num(1)}, want: failures(
			"clusterName", "expected type of cluster_name to be string")},
	})
	rulesTable(t, "eks:index:Cluster", []ruleRow{
		{name: "the child's name", in: resource.PropertyMap{"name": str("fleet")}},
		{name: "the child's name, refused", in: resource.PropertyMap{"name": str("fleet.1")}, want: failures(
			"name", `"name" doesn't comply with restrictions ("^[0-9A-Za-z][0-9A-Za-z_-]*$"): "fleet.1"`)},
	})
}

func TestKMSAliasName(t *testing.T) {
	rulesTable(t, "aws:kms/alias:Alias", []ruleRow{
		{name: "an alias", in: resource.PropertyMap{"name": str("alias/interruptions/bus_1")}},
		{name: "reserved", in: resource.PropertyMap{"name": str("alias/aws/sqs")}, want: failures(
			"name", `"name" cannot begin with reserved AWS CMK prefix 'alias/aws/'`)},
		{name: "no prefix", in: resource.PropertyMap{"name": str("bus")}, want: failures(
			"name", `"name" must begin with 'alias/' and be comprised of only [0-9A-Za-z_/-]`)},
		{name: "both", in: resource.PropertyMap{"name": str("alias/aws/a b")}, want: failures(
			"name", `"name" cannot begin with reserved AWS CMK prefix 'alias/aws/'`,
			"name", `"name" must begin with 'alias/' and be comprised of only [0-9A-Za-z_/-]`)},
		{name: "not a string", in: resource.PropertyMap{"name": num(1)}, want: failures("name", "expected type of name to be string")},
	})
}

func TestEC2AutomateARN(t *testing.T) {
	const accountRe = `^(aws|aws-managed|third-party|\d{12}|cw.{10})$`
	const bad = "arn:aws:automate:eu-west-1:ec2:explode"
	rulesTable(t, "aws:cloudwatch/metricAlarm:MetricAlarm", []ruleRow{
		{name: "an SNS topic and an EC2 action", in: resource.PropertyMap{"alarmActions": arr(
			str("arn:aws:sns:eu-west-1:123456789012:oncall"), str("arn:aws:automate:eu-west-1:ec2:recover"))}},
		{name: "an EC2 action that is none", in: resource.PropertyMap{"okActions": arr(str("arn:aws:automate:eu-west-1:ec2:stop"), str(bad))}, want: failures(
			"okActions[1]", fmt.Sprintf(`"ok_actions.1" (%s) is an invalid ARN: invalid account ID value (expecting to match regular expression: %s)`, bad, accountRe),
			"okActions[1]", fmt.Sprintf(`"ok_actions.1" does not match EC2 automation ARN ("^arn:[\\w-]+:automate:[\\w-]+:ec2:(reboot|recover|stop|terminate)$"): %q`, bad))},
		{name: "not a string: both types refused", in: resource.PropertyMap{"alarmActions": arr(num(1))}, want: failures(
			"alarmActions[0]", "expected type of alarm_actions.0 to be string",
			"alarmActions[0]", "expected type of alarm_actions.0 to be string")},
		{name: "six actions", in: resource.PropertyMap{"insufficientDataActions": arr(
			str("arn:aws:automate:eu-west-1:ec2:stop"), str("arn:aws:automate:eu-west-1:ec2:stop"), str("arn:aws:automate:eu-west-1:ec2:stop"),
			str("arn:aws:automate:eu-west-1:ec2:stop"), str("arn:aws:automate:eu-west-1:ec2:stop"), str("arn:aws:automate:eu-west-1:ec2:stop"))},
			want: failures("insufficientDataActions",
				"Too many list items. Attribute insufficient_data_actions supports 5 item maximum, but config has 6 declared.")},
	})
}

func TestAccountID(t *testing.T) {
	rulesTable(t, "aws:s3/bucketVersioningV2:BucketVersioningV2", []ruleRow{
		{name: "12 digits", in: resource.PropertyMap{"expectedBucketOwner": str("123456789012")}},
		{name: "11 digits", in: resource.PropertyMap{"expectedBucketOwner": str("12345678901")}, want: failures(
			"expectedBucketOwner", `"expected_bucket_owner" doesn't look like AWS Account ID (exactly 12 digits): "12345678901"`)},
		{name: "13 digits", in: resource.PropertyMap{"expectedBucketOwner": str("1234567890123")}, want: failures(
			"expectedBucketOwner", `"expected_bucket_owner" doesn't look like AWS Account ID (exactly 12 digits): "1234567890123"`)},
		{name: "not a string", in: resource.PropertyMap{"expectedBucketOwner": num(123456789012)}, want: failures(
			"expectedBucketOwner", "expected type of expected_bucket_owner to be string")},
	})
	rulesTable(t, "aws:cloudformation/stackSetInstance:StackSetInstance", []ruleRow{
		{name: "an account", in: resource.PropertyMap{"accountId": str("123456789012")}},
		{name: "beside deployment targets: the conflict alone", in: resource.PropertyMap{
			"accountId": str("1"), "deploymentTargets": obj(resource.PropertyMap{}),
		}, want: failures(
			"accountId", `Conflicting configuration arguments. "account_id": conflicts with deployment_targets`,
			"deploymentTargets", `Conflicting configuration arguments. "deployment_targets": conflicts with account_id`)},
	})
}

func TestEventPatternValue(t *testing.T) {
	pattern := func(n int) string { return `{"a":"` + strings.Repeat("x", n) + `"}` } // n+8 characters
	rulesTable(t, "aws:cloudwatch/eventRule:EventRule", []ruleRow{
		{name: "empty", in: resource.PropertyMap{"eventPattern": str("")}},
		{name: "a pattern", in: resource.PropertyMap{"eventPattern": str(`{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`)}},
		{name: "4096 characters", in: resource.PropertyMap{"eventPattern": str(pattern(4088))}},
		{name: "4097 characters", in: resource.PropertyMap{"eventPattern": str(pattern(4089))}, want: failures(
			"eventPattern", fmt.Sprintf(`"event_pattern" cannot be longer than 4096 characters: %q`, pattern(4089)))},
		{name: "longer before it is normalized", in: resource.PropertyMap{"eventPattern": str("{ \"a\" :\n  \"" + strings.Repeat("x", 4088) + "\" }")}},
		{name: "<, > and & count once", in: resource.PropertyMap{"eventPattern": str(`{"a":"` + strings.Repeat("x", 4085) + `<>&"}`)}},
		{name: "<, > and & past the limit", in: resource.PropertyMap{"eventPattern": str(`{"a":"` + strings.Repeat("x", 4086) + `<>&"}`)}, want: failures(
			"eventPattern", fmt.Sprintf(`"event_pattern" cannot be longer than 4096 characters: %q`, `{"a":"`+strings.Repeat("x", 4086)+`<>&"}`))},
		{name: "not JSON", in: resource.PropertyMap{"eventPattern": str("nope")}, want: failures(
			"eventPattern", `"event_pattern" contains an invalid JSON: invalid character 'o' in literal null (expecting 'u')`)},
		{name: "not a string", in: resource.PropertyMap{"eventPattern": num(1)}, want: failures(
			"eventPattern", "expected type of event_pattern to be string")},
	})
}

func TestEventBusNameOrARN(t *testing.T) {
	const nameRe = `"^[/\\.\\-_A-Za-z0-9]+$"`
	rulesTable(t, "aws:cloudwatch/eventTarget:EventTarget", []ruleRow{
		{name: "default", in: resource.PropertyMap{"eventBusName": str("default")}},
		{name: "a partner bus", in: resource.PropertyMap{"eventBusName": str("aws.partner/x.com/1")}},
		{name: "a bus ARN", in: resource.PropertyMap{"eventBusName": str("arn:aws:events:eu-west-1:123456789012:event-bus/central")}},
		{name: "1600 characters", in: resource.PropertyMap{"eventBusName": str(strings.Repeat("b", 1600))}},
		{name: "1601 characters", in: resource.PropertyMap{"eventBusName": str(strings.Repeat("b", 1601))}, want: failures(
			"eventBusName", "expected length of event_bus_name to be in the range (1 - 1600), got "+strings.Repeat("b", 1601))},
		{name: "empty", in: resource.PropertyMap{"eventBusName": str("")}, want: failures(
			"eventBusName", "expected length of event_bus_name to be in the range (1 - 1600), got ")},
		{name: "another service's ARN", in: resource.PropertyMap{"eventBusName": str("arn:aws:sqs:eu-west-1:123456789012:event-bus/x")}, want: failures(
			"eventBusName", `"event_bus_name" (arn:aws:sqs:eu-west-1:123456789012:event-bus/x) is not a valid Event Bus ARN`,
			"eventBusName", "expected value of event_bus_name to match regular expression "+nameRe+", got arn:aws:sqs:eu-west-1:123456789012:event-bus/x")},
		{name: "another events resource", in: resource.PropertyMap{"eventBusName": str("arn:aws:events:eu-west-1:123456789012:rule/x")}, want: failures(
			"eventBusName", `"event_bus_name" (arn:aws:events:eu-west-1:123456789012:rule/x) is not a valid Event Bus ARN`,
			"eventBusName", "expected value of event_bus_name to match regular expression "+nameRe+", got arn:aws:events:eu-west-1:123456789012:rule/x")},
		{name: "an invalid bus ARN: both checks of ValidARNCheck", in: resource.PropertyMap{"eventBusName": str("arn:aws:sqs:EU:123456789012:q")}, want: failures(
			"eventBusName", `"event_bus_name" (arn:aws:sqs:EU:123456789012:q) is an invalid ARN: invalid region value (expecting to match regular expression: ^[a-z]{2}(-[a-z]+)+-\d$)`,
			"eventBusName", `"event_bus_name" (arn:aws:sqs:EU:123456789012:q) is not a valid Event Bus ARN`,
			"eventBusName", "expected value of event_bus_name to match regular expression "+nameRe+", got arn:aws:sqs:EU:123456789012:q")},
		{name: "neither a name nor an ARN", in: resource.PropertyMap{"eventBusName": str("bad name")}, want: failures(
			"eventBusName", `"event_bus_name" (bad name) is an invalid ARN: arn: invalid prefix`,
			"eventBusName", "expected value of event_bus_name to match regular expression "+nameRe+", got bad name")},
	})
}

func TestSQSQueueName(t *testing.T) {
	rulesTable(t, "aws:sqs/queue:Queue", []ruleRow{
		{name: "80 characters", in: resource.PropertyMap{"name": str(strings.Repeat("q", 79) + "-")}},
		{name: "81 characters", in: resource.PropertyMap{"name": str(strings.Repeat("q", 81))}, want: failures(
			"name", "invalid queue name: "+strings.Repeat("q", 81))},
		{name: "empty", in: resource.PropertyMap{"name": str("")}, want: failures("name", "invalid queue name: ")},
		{name: "a dot", in: resource.PropertyMap{"name": str("q.fifo")}, want: failures("name", "invalid queue name: q.fifo")},
		{name: "fifo, 75 characters and .fifo", in: resource.PropertyMap{"name": str(strings.Repeat("q", 75) + ".fifo"), "fifoQueue": boolean(true)}},
		{name: "fifo, 76 characters and .fifo", in: resource.PropertyMap{"name": str(strings.Repeat("q", 76) + ".fifo"), "fifoQueue": boolean(true)}, want: failures(
			"name", "invalid queue name: "+strings.Repeat("q", 76)+".fifo")},
		{name: "fifo without .fifo", in: resource.PropertyMap{"name": str("q"), "fifoQueue": secret(boolean(true))}, want: failures("name", "invalid queue name: q")},
		{name: "fifoQueue false", in: resource.PropertyMap{"name": str("q"), "fifoQueue": boolean(false)}},
		{name: "fifoQueue not a bool", in: resource.PropertyMap{"name": str("q"), "fifoQueue": str("true")}},
		{name: "not a string: not this rule's", in: resource.PropertyMap{"name": num(1)}},
		{name: "beside namePrefix: the conflict alone", in: resource.PropertyMap{"name": str("q.x"), "namePrefix": str("p")}, want: failures(
			"name", `Conflicting configuration arguments. "name": conflicts with name_prefix`)},
	})
}

func TestMetricAlarmStatistic(t *testing.T) {
	const one = "One of `statistic` or `extended_statistic` must be set for a cloudwatch metric alarm"
	rulesTable(t, "aws:cloudwatch/metricAlarm:MetricAlarm", []ruleRow{
		{name: "a statistic", in: resource.PropertyMap{"metricName": str("ApproximateAgeOfOldestMessage"), "statistic": str("Maximum")}},
		{name: "an extended statistic", in: resource.PropertyMap{"metricName": str("Age"), "extendedStatistic": str("p99")}},
		{name: "neither", in: resource.PropertyMap{"metricName": str("Age")}, want: failures("metricName", one)},
		{name: "an empty statistic is unset", in: resource.PropertyMap{"metricName": str("Age"), "statistic": str("")}, want: failures(
			"metricName", one,
			"statistic", `expected statistic to be one of ["SampleCount" "Average" "Sum" "Minimum" "Maximum"], got `)},
		{name: "both", in: resource.PropertyMap{"metricName": str("Age"), "statistic": str("Maximum"), "extendedStatistic": str("p99")}, want: failures(
			"metricName", one,
			"statistic", `Conflicting configuration arguments. "statistic": conflicts with extended_statistic`)},
		{name: "no metric name", in: resource.PropertyMap{"metricName": str("")}, want: failures(
			"metricName", "expected length of metric_name to be in the range (1 - 255), got ")},
		{name: "a statistic unknown", in: resource.PropertyMap{"metricName": str("Age"), "statistic": unknown}},
	})
}

func TestMetricQueryExpressionOrMetric(t *testing.T) {
	const both = "No metric_query may have both `expression` and a `metric` specified"
	metric := obj(resource.PropertyMap{"metricName": str("Age"), "namespace": str("AWS/SQS"), "period": num(60), "stat": str("p99")})
	rulesTable(t, "aws:cloudwatch/metricAlarm:MetricAlarm", []ruleRow{
		{name: "an expression and a metric apart", in: resource.PropertyMap{"metricQueries": arr(
			obj(resource.PropertyMap{"id": str("e1"), "expression": str("m1*2")}),
			obj(resource.PropertyMap{"id": str("m1"), "metric": metric}),
		)}},
		{name: "an empty expression beside a metric", in: resource.PropertyMap{"metricQueries": arr(
			obj(resource.PropertyMap{"id": str("m1"), "expression": str(""), "metric": metric}),
		)}, want: failures("metricQueries[0].expression", "expected length of metric_query.0.expression to be in the range (1 - 1024), got ")},
		{name: "an expression beside an empty metric", in: resource.PropertyMap{"metricQueries": arr(
			obj(resource.PropertyMap{"id": str("m1"), "expression": str("m2"), "metric": obj(resource.PropertyMap{})}),
		)}},
		{name: "an expression and a metric together", in: resource.PropertyMap{"metricQueries": arr(
			obj(resource.PropertyMap{"id": str("m1"), "metric": metric}),
			secret(obj(resource.PropertyMap{"id": str("e1"), "expression": str("m1*2"), "metric": metric})),
		)}, want: failures("metricQueries", both)},
		{name: "beside metricName: the conflict alone", in: resource.PropertyMap{"metricName": str("Age"), "statistic": str("Maximum"), "metricQueries": arr(
			obj(resource.PropertyMap{"id": str("e1"), "expression": str("m1*2"), "metric": metric}),
		)}, want: failures(
			"metricName", `Conflicting configuration arguments. "metric_name": conflicts with metric_query`,
			"statistic", `Conflicting configuration arguments. "statistic": conflicts with metric_query`,
			"metricQueries", `Conflicting configuration arguments. "metric_query": conflicts with metric_name`)},
		{name: "a query that is no object", in: resource.PropertyMap{"metricQueries": arr(str("x"))}},
		{name: "metricQueries that is no list", in: resource.PropertyMap{"metricQueries": str("x")}},
	})
}

func TestAssumeRoleDuration(t *testing.T) {
	const bounds = `could not validate provider configuration: duration "assume_role.0.duration" must be between 15 minutes (15m) and 12 hours (12h), inclusive`
	ar := func(d resource.PropertyValue) resource.PropertyMap {
		return resource.PropertyMap{"assumeRole": obj(resource.PropertyMap{"duration": d})}
	}
	rulesTable(t, "pulumi:providers:aws", []ruleRow{
		{name: "15 minutes", in: ar(str("15m"))},
		{name: "12 hours", in: ar(str("12h"))},
		{name: "a second short", in: ar(str("14m59s")), want: failures("assumeRole.duration", bounds)},
		{name: "a second over", in: ar(str("12h0m1s")), want: failures("assumeRole.duration", bounds)},
		{name: "no duration", in: ar(str("1x")), want: failures("assumeRole.duration",
			`could not validate provider configuration: "assume_role.0.duration" cannot be parsed as a duration: time: unknown unit "x" in duration "1x"`)},
		{name: "not a string", in: ar(num(900)), want: failures("assumeRole.duration",
			"could not validate provider configuration: expected type of assume_role.0.duration to be string")},
		{name: "account IDs allowed and forbidden", in: resource.PropertyMap{
			"allowedAccountIds": arr(str("123456789012")), "forbiddenAccountIds": arr(str("210987654321")),
		}, want: failures(
			"allowedAccountIds", `could not validate provider configuration: Conflicting configuration arguments. "allowed_account_ids": conflicts with forbidden_account_ids`,
			"forbiddenAccountIds", `could not validate provider configuration: Conflicting configuration arguments. "forbidden_account_ids": conflicts with allowed_account_ids`)},
	})
}

func TestEKSAuthenticationMode(t *testing.T) {
	rulesTable(t, "eks:index:Cluster", []ruleRow{
		{name: "API", in: resource.PropertyMap{"authenticationMode": str("API")}},
		{name: "CONFIG_MAP", in: resource.PropertyMap{"authenticationMode": str("CONFIG_MAP")}},
		{name: "API_AND_CONFIG_MAP", in: resource.PropertyMap{"authenticationMode": str("API_AND_CONFIG_MAP")}},
		{name: "empty", in: resource.PropertyMap{"authenticationMode": str("")}},
		{name: "not a string", in: resource.PropertyMap{"authenticationMode": num(1)}},
		{name: "lower case", in: resource.PropertyMap{"authenticationMode": str("api")}, want: failures(
			"authenticationMode", "Invalid value for authenticationMode: api. Allowed values are: CONFIG_MAP, API_AND_CONFIG_MAP, API.")},
	})
}

func TestEKSConfigMapOnly(t *testing.T) {
	mapping := arr(obj(resource.PropertyMap{"roleArn": str("arn:aws:iam::123456789012:role/admin"), "username": str("admin")}))
	rulesTable(t, "eks:index:Cluster", []ruleRow{
		{name: "no mode", in: resource.PropertyMap{"roleMappings": mapping}},
		{name: "CONFIG_MAP", in: resource.PropertyMap{"roleMappings": mapping, "authenticationMode": str("CONFIG_MAP")}},
		{name: "API_AND_CONFIG_MAP", in: resource.PropertyMap{"userMappings": mapping, "authenticationMode": str("API_AND_CONFIG_MAP")}},
		{name: "an unknown mode: unset", in: resource.PropertyMap{"roleMappings": mapping, "authenticationMode": unknown}},
		{name: "API, empty", in: resource.PropertyMap{"roleMappings": arr(), "instanceRoles": str(""), "authenticationMode": str("API")}},
		{name: "API", in: resource.PropertyMap{"roleMappings": mapping, "authenticationMode": str("API")}, want: failures(
			"roleMappings", "The 'roleMappings' property does not support non-empty values when 'authenticationMode' is set to 'API'.")},
		{name: "API, a secret mode", in: resource.PropertyMap{"userMappings": mapping, "authenticationMode": secret(str("API"))}, want: failures(
			"userMappings", "The 'userMappings' property does not support non-empty values when 'authenticationMode' is set to 'API'.")},
		{name: "API, instance roles", in: resource.PropertyMap{"instanceRoles": arr(str("worker")), "authenticationMode": str("API")}, want: failures(
			"instanceRoles", "The 'instanceRoles' property does not support non-empty values when 'authenticationMode' is set to 'API'.")},
	})
}

func TestEKSAccessEntries(t *testing.T) {
	entries := obj(resource.PropertyMap{"admin": obj(resource.PropertyMap{"principalArn": str("arn:aws:iam::123456789012:role/admin")})})
	rulesTable(t, "eks:index:Cluster", []ruleRow{
		{name: "API", in: resource.PropertyMap{"accessEntries": entries, "authenticationMode": str("API")}},
		{name: "API_AND_CONFIG_MAP", in: resource.PropertyMap{"accessEntries": entries, "authenticationMode": str("API_AND_CONFIG_MAP")}},
		{name: "no mode", in: resource.PropertyMap{"accessEntries": entries}, want: failures(
			"accessEntries", "The 'accessEntries' property is not supported when 'authenticationMode' is not set.")},
		{name: "no mode, none (an empty object is truthy)", in: resource.PropertyMap{"accessEntries": obj(resource.PropertyMap{})}, want: failures(
			"accessEntries", "The 'accessEntries' property is not supported when 'authenticationMode' is not set.")},
		{name: "CONFIG_MAP", in: resource.PropertyMap{"accessEntries": entries, "authenticationMode": str("CONFIG_MAP")}, want: failures(
			"accessEntries", "The 'accessEntries' property is not supported when 'authenticationMode' is set to 'CONFIG_MAP'.")},
		{name: "falsy", in: resource.PropertyMap{"accessEntries": boolean(false)}},
	})
}

func TestEKSWhenTruthy(t *testing.T) {
	const roles = "instanceRole and instanceRoles are mutually exclusive, and cannot both be set."
	const subnets = "subnetIds, and the use of publicSubnetIds and/or privateSubnetIds are mutually exclusive. Choose a single approach."
	const options = "Setting nodeGroupOptions, and any set of singular node group option(s) on the cluster, is mutually exclusive. Choose a single approach."
	const provider = "The `creationRoleProvider.provider` option is not supported in non-nodejs Pulumi programs. Please use the `providerCredentialOpts` option instead."
	rulesTable(t, "eks:index:Cluster", []ruleRow{
		{name: "instanceRole alone", in: resource.PropertyMap{"instanceRole": str("role")}},
		{name: "instanceRole empty beside instanceRoles", in: resource.PropertyMap{"instanceRole": str(""), "instanceRoles": arr(str("r"))}},
		{name: "instanceRole beside instanceRoles", in: resource.PropertyMap{"instanceRole": str("role"), "instanceRoles": arr(str("r"))}, want: failures(
			"instanceRole", roles)},
		{name: "instanceRole beside no instanceRoles (an empty array is truthy)", in: resource.PropertyMap{"instanceRole": str("role"), "instanceRoles": arr()}, want: failures(
			"instanceRole", roles)},
		{name: "instanceRole beside unknown instanceRoles", in: resource.PropertyMap{"instanceRole": str("role"), "instanceRoles": unknown}, want: failures(
			"instanceRole", roles)},
		{name: "subnetIds beside privateSubnetIds", in: resource.PropertyMap{"subnetIds": arr(str("s")), "privateSubnetIds": arr(str("p"))}, want: failures(
			"subnetIds", subnets)},
		{name: "subnetIds beside null publicSubnetIds", in: resource.PropertyMap{"subnetIds": arr(str("s")), "publicSubnetIds": null()}},
		{name: "nodeGroupOptions beside minSize 0 (falsy)", in: resource.PropertyMap{"nodeGroupOptions": obj(resource.PropertyMap{}), "minSize": num(0)}},
		{name: "nodeGroupOptions beside gpu false", in: resource.PropertyMap{"nodeGroupOptions": obj(resource.PropertyMap{}), "gpu": boolean(false)}},
		{name: "nodeGroupOptions beside minSize 1", in: resource.PropertyMap{"nodeGroupOptions": obj(resource.PropertyMap{}), "minSize": num(1)}, want: failures(
			"nodeGroupOptions", options)},
		{name: "nodeGroupOptions false beside minSize 1", in: resource.PropertyMap{"nodeGroupOptions": boolean(false), "minSize": num(1)}},
		{name: "nodeGroupOptions 0 beside gpu", in: resource.PropertyMap{"nodeGroupOptions": num(0), "gpu": boolean(true)}},
		{name: "creationRoleProvider with a role", in: resource.PropertyMap{"creationRoleProvider": obj(resource.PropertyMap{"role": str("r")})}},
		{name: "creationRoleProvider with a provider", in: resource.PropertyMap{"creationRoleProvider": secret(obj(resource.PropertyMap{"provider": str("p")}))}, want: failures(
			"creationRoleProvider", provider)},
	})
	rulesTable(t, "eks:index:ManagedNodeGroup", []ruleRow{
		{name: "a launch template alone", in: resource.PropertyMap{"cluster": str("c"), "nodeRoleArn": str("arn"), "launchTemplate": obj(resource.PropertyMap{"id": str("lt")})}},
		{name: "a launch template beside enableIMDSv2 false", in: resource.PropertyMap{
			"cluster": str("c"), "nodeRoleArn": str("arn"), "launchTemplate": obj(resource.PropertyMap{"id": str("lt")}), "enableIMDSv2": boolean(false)}},
		{name: "a launch template beside enableIMDSv2", in: resource.PropertyMap{
			"cluster": str("c"), "nodeRoleArn": str("arn"), "launchTemplate": obj(resource.PropertyMap{}), "enableIMDSv2": boolean(true)}, want: failures(
			"launchTemplate", "If you provide a custom launch template, you cannot provide kubeletExtraArgs, bootstrapExtraArgs or enableIMDSv2. "+
				"Please include these in the launch template that you are providing.")},
		{name: "a launch template beside kubeletExtraArgs", in: resource.PropertyMap{
			"cluster": str("c"), "nodeRoleArn": str("arn"), "launchTemplate": str("lt"), "kubeletExtraArgs": str("--max-pods=110")}, want: failures(
			"launchTemplate", "If you provide a custom launch template, you cannot provide kubeletExtraArgs, bootstrapExtraArgs or enableIMDSv2. "+
				"Please include these in the launch template that you are providing.")},
	})
}

func TestEKSNodeRole(t *testing.T) {
	const required = "An IAM role, or role ARN must be provided to create a managed node group"
	rulesTable(t, "eks:index:ManagedNodeGroup", []ruleRow{
		{name: "a role ARN", in: resource.PropertyMap{"cluster": str("c"), "nodeRoleArn": str("arn:aws:iam::123456789012:role/nodes")}},
		{name: "a role", in: resource.PropertyMap{"cluster": str("c"), "nodeRole": obj(resource.PropertyMap{"arn": str("a")})}},
		{name: "an unknown role", in: resource.PropertyMap{"cluster": str("c"), "nodeRole": unknownOutput}},
		{name: "neither", in: resource.PropertyMap{"cluster": str("c")}, want: failures("cluster", required)},
		{name: "an empty role ARN: neither, and the child's NoZeroValues", in: resource.PropertyMap{"cluster": str("c"), "nodeRoleArn": str("")}, want: failures(
			"cluster", required,
			"nodeRoleArn", "node_role_arn must not be empty, got ")},
		{name: "both", in: resource.PropertyMap{"cluster": str("c"), "nodeRoleArn": str("arn"), "nodeRole": str("role")}, want: failures(
			"nodeRoleArn", "nodeRole and nodeRoleArn are mutually exclusive to create a managed node group")},
	})
}

func TestEKSManagedNodeGroupChildren(t *testing.T) {
	rulesTable(t, "eks:index:ManagedNodeGroup", []ruleRow{
		{name: "sizes at their edges", in: resource.PropertyMap{"cluster": str("c"), "nodeRoleArn": str("a"),
			"scalingConfig": obj(resource.PropertyMap{"minSize": num(0), "maxSize": num(1), "desiredSize": num(0)}),
			"subnetIds":     arr(str("s")), "amiType": str("AL2023_ARM_64_STANDARD")}},
		{name: "sizes past them", in: resource.PropertyMap{"cluster": str("c"), "nodeRoleArn": str("a"),
			"scalingConfig": obj(resource.PropertyMap{"minSize": num(-1), "maxSize": num(0), "desiredSize": num(-1)}),
			"subnetIds":     arr(), "amiType": str("AL2023_ARM_64")}, want: failures(
			"amiType", `expected ami_type to be one of ["AL2_x86_64" "AL2_x86_64_GPU" "AL2_ARM_64" "CUSTOM" "BOTTLEROCKET_ARM_64" "BOTTLEROCKET_x86_64" `+
				`"BOTTLEROCKET_ARM_64_FIPS" "BOTTLEROCKET_x86_64_FIPS" "BOTTLEROCKET_ARM_64_NVIDIA" "BOTTLEROCKET_x86_64_NVIDIA" "WINDOWS_CORE_2019_x86_64" `+
				`"WINDOWS_FULL_2019_x86_64" "WINDOWS_CORE_2022_x86_64" "WINDOWS_FULL_2022_x86_64" "AL2023_x86_64_STANDARD" "AL2023_ARM_64_STANDARD" `+
				`"AL2023_x86_64_NEURON" "AL2023_x86_64_NVIDIA" "AL2023_ARM_64_NVIDIA"], got AL2023_ARM_64`,
			"subnetIds", "Not enough list items. Attribute subnet_ids requires 1 item minimum, but config has only 0 declared.",
			"scalingConfig.minSize", "expected scaling_config.0.min_size to be at least (0), got -1",
			"scalingConfig.maxSize", "expected scaling_config.0.max_size to be at least (1), got 0",
			"scalingConfig.desiredSize", "expected scaling_config.0.desired_size to be at least (0), got -1")},
	})
}

func TestTruthyValue(t *testing.T) {
	for name, c := range map[string]struct {
		v    resource.PropertyValue
		want bool
	}{
		"null": {null(), false}, "false": {boolean(false), false}, "true": {boolean(true), true},
		"empty": {str(""), false}, "string": {str("x"), true}, "zero": {num(0), false}, "one": {num(1), true},
		"empty array": {arr(), true}, "empty object": {obj(resource.PropertyMap{}), true},
		"secret false": {secret(boolean(false)), false}, "known output empty": {output(str("")), false},
	} {
		if got := truthyValue(c.v); got != c.want {
			t.Errorf("truthyValue(%s) = %v, want %v", name, got, c.want)
		}
	}
}
