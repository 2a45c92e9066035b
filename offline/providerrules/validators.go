package providerrules

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"gopkg.in/yaml.v3"
)

// The validators below are those of the Terraform plugin SDK v2 (helper/validation: int.go, strings.go, meta.go), at
// v2.37.0, the line terraform-provider-aws v5.100.0 builds on (pulumi-aws builds it with pulumi's fork of the SDK,
// github.com/pulumi/terraform-plugin-sdk/v2, whose helper/validation is upstream's), with their messages word for word;
// the provider's own (internal/verify, internal/framework/types) where it has its own; and the schema's behaviours
// (ConflictsWith, ExactlyOneOf, RequiredWith, MaxItems, MinItems) as helper/schema/schema.go reports them.
//
// pulumi-terraform-bridge (v3.110, the line pulumi-aws v6.83 is built with) reports each diagnostic as its summary,
// then ". " and its detail when it has one (pkg/tfbridge/adapt_check_failures.go, parseCheckError); a ValidateFunc's
// error is a summary without detail. The attribute a message names is the one the SDK passes: the full key
// ("scaling_config.0.maximum_concurrency") to a ValidateFunc, the last attribute name ("maximum_concurrency") to a
// ValidateDiagFunc made by validation.ToDiagFunc (helper/validation/meta.go), which every enum.Validate is (Diag).

// IntBetween is validation.IntBetween (helper/validation/int.go).
func IntBetween(lo, hi int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		n, ok := intOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be integer", attr)}
		}
		if n < lo || n > hi {
			return []string{fmt.Sprintf("expected %s to be in the range (%d - %d), got %d", attr, lo, hi, n)}
		}
		return nil
	}
}

// IntAtLeast is validation.IntAtLeast (helper/validation/int.go).
func IntAtLeast(lo int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		n, ok := intOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be integer", attr)}
		}
		if n < lo {
			return []string{fmt.Sprintf("expected %s to be at least (%d), got %d", attr, lo, n)}
		}
		return nil
	}
}

// IntAtMost is validation.IntAtMost (helper/validation/int.go).
func IntAtMost(hi int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		n, ok := intOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be integer", attr)}
		}
		if n > hi {
			return []string{fmt.Sprintf("expected %s to be at most (%d), got %d", attr, hi, n)}
		}
		return nil
	}
}

// IntInSlice is validation.IntInSlice (helper/validation/int.go).
func IntInSlice(valid ...int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		n, ok := intOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be integer", attr)}
		}
		if !slices.Contains(valid, n) {
			return []string{fmt.Sprintf("expected %s to be one of %v, got %d", attr, valid, n)}
		}
		return nil
	}
}

// IntDivisibleBy is validation.IntDivisibleBy (helper/validation/int.go).
func IntDivisibleBy(divisor int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		n, ok := intOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be integer", attr)}
		}
		if n%divisor != 0 {
			return []string{fmt.Sprintf("expected %s to be divisible by %d, got: %v", attr, divisor, n)}
		}
		return nil
	}
}

// StringLenBetween is validation.StringLenBetween (helper/validation/strings.go): the length in bytes.
func StringLenBetween(lo, hi int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if len(s) < lo || len(s) > hi {
			return []string{fmt.Sprintf("expected length of %s to be in the range (%d - %d), got %s", attr, lo, hi, s)}
		}
		return nil
	}
}

// StringInSlice is validation.StringInSlice (helper/validation/strings.go); ignoreCase as its second argument.
func StringInSlice(valid []string, ignoreCase bool) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		for _, x := range valid {
			if s == x || ignoreCase && strings.EqualFold(s, x) {
				return nil
			}
		}
		return []string{fmt.Sprintf("expected %s to be one of %q, got %s", attr, valid, s)}
	}
}

// StringMatch is validation.StringMatch (helper/validation/strings.go): message, when given, says why.
func StringMatch(re *regexp.Regexp, message string) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if ok := re.MatchString(s); !ok {
			if message != "" {
				return []string{fmt.Sprintf("invalid value for %s (%s)", attr, message)}
			}
			return []string{fmt.Sprintf("expected value of %s to match regular expression %q, got %v", attr, re, s)}
		}
		return nil
	}
}

// StringDoesNotMatch is validation.StringDoesNotMatch (helper/validation/strings.go).
func StringDoesNotMatch(re *regexp.Regexp, message string) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if ok := re.MatchString(s); ok {
			if message != "" {
				return []string{fmt.Sprintf("invalid value for %s (%s)", attr, message)}
			}
			return []string{fmt.Sprintf("expected value of %s to not match regular expression %q, got %v", attr, re, s)}
		}
		return nil
	}
}

// StringIsNotEmpty is validation.StringIsNotEmpty (helper/validation/strings.go).
func StringIsNotEmpty() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %q to be string", attr)}
		}
		if s == "" {
			return []string{fmt.Sprintf("expected %q to not be an empty string, got %v", attr, s)}
		}
		return nil
	}
}

// StringIsJSON is validation.StringIsJSON (helper/validation/strings.go): structure.NormalizeJsonString's parse, which
// takes the empty string for valid.
func StringIsJSON() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if err := normalizeJSON(s); err != nil {
			return []string{fmt.Sprintf("%q contains an invalid JSON: %s", attr, err)}
		}
		return nil
	}
}

// NoZeroValues is validation.NoZeroValues (helper/validation/meta.go), for strings and numbers.
func NoZeroValues() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		v = plain(v)
		switch {
		case v.IsString() && v.StringValue() == "":
			return []string{fmt.Sprintf("%s must not be empty, got %v", attr, v.StringValue())}
		case v.IsNumber() && v.NumberValue() == 0:
			return []string{fmt.Sprintf("%s must not be zero, got %v", attr, 0)}
		}
		return nil
	}
}

// All is validation.All (helper/validation/meta.go): every validator's problems.
func All(vs ...Validator) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		var out []string
		for _, f := range vs {
			out = append(out, f(attr, v, in)...)
		}
		return out
	}
}

// Before is the order in which the SDK's schemaMap.validate (helper/schema/schema.go) checks an attribute: its
// ExactlyOneOf, AtLeastOneOf, RequiredWith and ConflictsWith (schema) first, each returning at once when it fails; its
// value (its ValidateFunc, MaxItems, MinItems) only when they pass.
func Before(schema, value Validator) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		if out := schema(attr, v, in); len(out) > 0 {
			return out
		}
		return value(attr, v, in)
	}
}

// Any is validation.Any (helper/validation/meta.go), and validation.AnyDiag: nothing when one validator passes,
// every validator's problems otherwise.
func Any(vs ...Validator) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		var out []string
		for _, f := range vs {
			problems := f(attr, v, in)
			if len(problems) == 0 {
				return nil
			}
			out = append(out, problems...)
		}
		return out
	}
}

// Diag is validation.ToDiagFunc (helper/validation/meta.go): the wrapped validator is given the last attribute name of
// the path, not the full key ("maximum_event_age_in_seconds" for "target.0.retry_policy.0.maximum_event_age_in_seconds",
// "architectures" for "architectures.0").
func Diag(f Validator) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		return f(lastAttribute(attr), v, in)
	}
}

// Enum is the provider's enum.Validate[T]() (internal/enum/validate.go): validation.ToDiagFunc of
// validation.StringInSlice(Values[T](), false), the values in the AWS SDK's order.
func Enum(values ...string) Validator {
	return Diag(StringInSlice(values, false))
}

// lastAttribute is ToDiagFunc's key: the name of the path's last attribute step, "" when it has none.
func lastAttribute(attr string) string {
	parts := strings.Split(attr, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if _, err := strconv.Atoi(parts[i]); err != nil {
			return parts[i]
		}
	}
	return ""
}

// ConflictsWith is the schema's ConflictsWith (helper/schema/schema.go, validateConflictingAttributes): the property
// may not be set beside any of others (Pulumi paths; the message names their attributes, attrs, as the provider's
// schema does). A conflicting value unknown at a preview is let through, as the SDK does; any other value in the
// configuration conflicts, false and "" included (ResourceConfig.Get). A value of the property that holds an unknown
// (a list or block with an element or field unknown at a preview) is not checked: schemaMap.validate returns before
// validateConflictingAttributes when the value is not wholly known (isWhollyKnown).
func ConflictsWith(others map[string]string) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		if !whollyKnown(v) {
			return nil
		}
		for _, p := range sortedKeys(others) {
			if configured(in, p) {
				return []string{fmt.Sprintf("Conflicting configuration arguments. %q: conflicts with %s", attr, others[p])}
			}
		}
		return nil
	}
}

// ExactlyOneOf is the schema's ExactlyOneOf (helper/schema/schema.go, validateExactlyOneAttribute), checked from a
// property that is set: others maps the Pulumi paths of the other members to their attributes.
func ExactlyOneOf(others map[string]string) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		all := []string{attr}
		specified := []string{attr}
		for _, p := range sortedKeys(others) {
			all = append(all, others[p])
			if configured(in, p) {
				specified = append(specified, others[p])
			}
		}
		slices.Sort(all)
		all = slices.Compact(all)
		slices.Sort(specified)
		if len(specified) > 1 {
			return []string{fmt.Sprintf("Invalid combination of arguments. %q: only one of `%s` can be specified, but `%s` were specified.",
				attr, strings.Join(all, ","), strings.Join(specified, ","))}
		}
		return nil
	}
}

// RequiredWith is the schema's RequiredWith (helper/schema/schema.go, validateRequiredWithAttribute), checked from a
// property that is set: others maps the Pulumi paths of the attributes it requires to their attributes.
func RequiredWith(others map[string]string) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		all := []string{attr}
		missing := false
		for _, p := range sortedKeys(others) {
			all = append(all, others[p])
			if pv, ok := in.get(p); !ok || pv.IsNull() {
				missing = true
			}
		}
		slices.Sort(all)
		all = slices.Compact(all)
		if missing {
			return []string{fmt.Sprintf("Missing required argument. %q: all of `%s` must be specified", attr, strings.Join(all, ","))}
		}
		return nil
	}
}

// MaxItems is the schema's MaxItems of a list or a set (helper/schema/schema.go, validateList), which is not checked
// while an element is unknown (isWhollyKnown: the list may come from a dynamic block).
func MaxItems(n int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		if v = plain(v); v.IsArray() && whollyKnown(v) && len(v.ArrayValue()) > n {
			return []string{fmt.Sprintf("Too many list items. Attribute %s supports %d item maximum, but config has %d declared.", attr, n, len(v.ArrayValue()))}
		}
		return nil
	}
}

// MinItems is the schema's MinItems of a list or a set (helper/schema/schema.go, validateList), which is not checked
// while an element is unknown (isWhollyKnown).
func MinItems(n int) Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		if v = plain(v); v.IsArray() && whollyKnown(v) && len(v.ArrayValue()) < n {
			return []string{fmt.Sprintf("Not enough list items. Attribute %s requires %d item minimum, but config has only %d declared.", attr, n, len(v.ArrayValue()))}
		}
		return nil
	}
}

// EachKnown applies f to each known element of a list: a rule on the list itself (its MaxItems) and its elements.
func EachKnown(f Validator) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		v = plain(v)
		if !v.IsArray() {
			return nil
		}
		var out []string
		for i, e := range v.ArrayValue() {
			if known(e) && !plain(e).IsNull() {
				out = append(out, f(fmt.Sprintf("%s.%d", attr, i), e, in)...)
			}
		}
		return out
	}
}

// ProviderConfig is a check of the provider's own configuration (pulumi:providers:aws): pulumi-terraform-bridge
// prefixes the reason (pkg/tfbridge/check_failures.go, formatProviderCheckFailure).
func ProviderConfig(f Validator) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		problems := f(attr, v, in)
		for i, p := range problems {
			problems[i] = "could not validate provider configuration: " + p
		}
		return problems
	}
}

// The provider's own validators (internal/verify/validate.go, as terraform-provider-aws v5.100.0 has them).

var (
	arnAccountIDRegexp = regexp.MustCompile(`^(aws|aws-managed|third-party|\d{12}|cw.{10})$`)
	arnPartitionRegexp = regexp.MustCompile(`^aws(-[a-z]+)*$`)
	arnRegionRegexp    = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d$`)
)

// ValidARN is verify.ValidARN (internal/verify/validate.go, ValidARNCheck()), with the AWS SDK's arn.Parse.
func ValidARN() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if s == "" {
			return nil
		}
		parsed, err := parseARN(s)
		if err != nil {
			return []string{fmt.Sprintf("%q (%s) is an invalid ARN: %s", attr, s, err)}
		}
		var out []string
		if parsed.partition == "" {
			out = append(out, fmt.Sprintf("%q (%s) is an invalid ARN: missing partition value", attr, s))
		} else if !arnPartitionRegexp.MatchString(parsed.partition) {
			out = append(out, fmt.Sprintf("%q (%s) is an invalid ARN: invalid partition value (expecting to match regular expression: %s)", attr, s, arnPartitionRegexp))
		}
		if parsed.region != "" && !arnRegionRegexp.MatchString(parsed.region) {
			out = append(out, fmt.Sprintf("%q (%s) is an invalid ARN: invalid region value (expecting to match regular expression: %s)", attr, s, arnRegionRegexp))
		}
		if parsed.account != "" && !arnAccountIDRegexp.MatchString(parsed.account) {
			out = append(out, fmt.Sprintf("%q (%s) is an invalid ARN: invalid account ID value (expecting to match regular expression: %s)", attr, s, arnAccountIDRegexp))
		}
		if parsed.resource == "" {
			out = append(out, fmt.Sprintf("%q (%s) is an invalid ARN: missing resource value", attr, s))
		}
		return out
	}
}

type arnParts struct{ partition, service, region, account, resource string }

// parseARN is the AWS SDK's arn.Parse (aws-sdk-go aws/arn, the same in aws-sdk-go-v2).
func parseARN(s string) (arnParts, error) {
	if !strings.HasPrefix(s, "arn:") {
		return arnParts{}, errors.New("arn: invalid prefix")
	}
	sections := strings.SplitN(s, ":", 6)
	if len(sections) != 6 {
		return arnParts{}, errors.New("arn: not enough sections")
	}
	return arnParts{partition: sections[1], service: sections[2], region: sections[3], account: sections[4], resource: sections[5]}, nil
}

// ValidIAMPolicyJSON is verify.ValidIAMPolicyJSON (internal/verify/validate.go) as terraform-provider-aws v5.100.0 has
// it: no size check (the `maxlen` variant is an unmerged pull request, hashicorp/terraform-provider-aws#33088; size
// validation is still asked for in #45533), duplicate keys refused (aws-sdk-go-base validation.JSONNoDuplicateKeys).
func ValidIAMPolicyJSON() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if len(s) < 1 {
			return []string{fmt.Sprintf("%q is an empty string, which is not a valid JSON value", attr)}
		}
		if first := s[:1]; first != "{" {
			switch first {
			case " ", "\t", "\r", "\n":
				return []string{fmt.Sprintf("%q contains an invalid JSON policy: leading space characters are not allowed", attr)}
			case `"`:
				var hint, content string
				var inner any
				if err := json.Unmarshal([]byte(s), &content); err == nil {
					if strings.HasSuffix(content, ".json") {
						hint = " (have you passed a JSON-encoded filename instead of the content of that file?)"
					} else if err := json.Unmarshal([]byte(content), &inner); err == nil {
						hint = " (have you double-encoded your JSON data?)"
					}
				}
				return []string{fmt.Sprintf("%q contains an invalid JSON policy: contains a JSON-encoded string, not a JSON-encoded object%s", attr, hint)}
			case "[":
				return []string{fmt.Sprintf("%q contains an invalid JSON policy: contains a JSON array, not a JSON object", attr)}
			default:
				return []string{fmt.Sprintf("%q contains an invalid JSON policy: not a JSON object", attr)}
			}
		}
		if err := normalizeJSON(s); err != nil {
			msg := err.Error()
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				msg = fmt.Sprintf("%s, at byte offset %d", msg, syntax.Offset)
			}
			return []string{fmt.Sprintf("%q contains an invalid JSON policy: %s", attr, msg)}
		}
		if err := jsonNoDuplicateKeys(s); err != nil {
			return []string{fmt.Sprintf("%q contains duplicate JSON keys: %s", attr, err)}
		}
		return nil
	}
}

// ValidStringIsJSONOrYAML is verify.ValidStringIsJSONOrYAML (internal/verify/validate.go): JSON when the value starts
// with "{" after blanks, YAML otherwise.
func ValidStringIsJSONOrYAML() Validator {
	looksLikeJSON := regexp.MustCompile(`^\s*{`)
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return []string{fmt.Sprintf("expected type of %s to be string", attr)}
		}
		if looksLikeJSON.MatchString(s) {
			if err := normalizeJSON(s); err != nil {
				return []string{fmt.Sprintf("%q contains an invalid JSON: %s", attr, err)}
			}
			return nil
		}
		if s == "" {
			return nil
		}
		var y any
		if err := yaml.Unmarshal([]byte(s), &y); err != nil {
			return []string{fmt.Sprintf("%q contains an invalid YAML: %s", attr, err)}
		}
		return nil
	}
}

// FrameworkARN is the plugin-framework type fwtypes.ARNType's validation (internal/framework/types/arn.go, Validate),
// which the framework runs at ValidateResourceConfig: "ARN Type Validation Error", detail "Value %q cannot be parsed
// as an ARN." when arn.IsARN fails (aws-sdk-go-v2: the "arn:" prefix and at least five colons).
func FrameworkARN() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok {
			return nil
		}
		if !strings.HasPrefix(s, "arn:") || strings.Count(s, ":") < 5 {
			return []string{fmt.Sprintf("ARN Type Validation Error. Value %q cannot be parsed as an ARN.", s)}
		}
		return nil
	}
}

// normalizeJSON is structure.NormalizeJsonString's parse (helper/structure/normalize_json.go): "" is valid.
func normalizeJSON(s string) error {
	if s == "" {
		return nil
	}
	var j any
	return json.Unmarshal([]byte(s), &j)
}

// jsonNoDuplicateKeys is aws-sdk-go-base/v2 validation.JSONNoDuplicateKeys (validation/json.go).
func jsonNoDuplicateKeys(s string) error {
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return fmt.Errorf("unmarshaling input: %w", err)
	}
	return checkJSONToken(json.NewDecoder(strings.NewReader(s)), nil)
}

func checkJSONToken(dec *json.Decoder, path []string) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := t.(json.Delim)
	if !ok {
		return nil
	}
	var dups []error
	switch delim {
	case '{':
		keys := map[string]bool{}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return err
			}
			key := t.(string)
			if keys[key] {
				dups = append(dups, fmt.Errorf(`duplicate key "%s"`, strings.Join(append(slices.Clone(path), key), ".")))
			}
			keys[key] = true
			if err := checkJSONToken(dec, append(slices.Clone(path), key)); err != nil {
				dups = append(dups, err)
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := checkJSONToken(dec, append(slices.Clone(path), strconv.Itoa(i))); err != nil {
				dups = append(dups, err)
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
	}
	return errors.Join(dups...)
}

// configured reports whether the property at path is in the configuration as the SDK's ResourceConfig.Get finds it:
// present and not null; a value unknown at a preview is not taken as set (the SDK defers those checks).
func configured(in Inputs, path string) bool {
	v, ok := in.get(path)
	if !ok || v.IsNull() || !known(v) {
		return false
	}
	return true
}

// whollyKnown is the SDK's isWhollyKnown (helper/schema/schema.go): v holds no value unknown at a preview, at any
// depth.
func whollyKnown(v resource.PropertyValue) bool {
	v = plain(v)
	if !known(v) {
		return false
	}
	switch {
	case v.IsArray():
		for _, e := range v.ArrayValue() {
			if !whollyKnown(e) {
				return false
			}
		}
	case v.IsObject():
		for _, e := range v.ObjectValue() {
			if !whollyKnown(e) {
				return false
			}
		}
	}
	return true
}

// truthy is JavaScript's truthiness of a pulumi-eks argument: absent, null, false, 0 and "" are falsy; a value
// unknown at a preview reaches the component as an Output, an object, which is truthy; arrays and objects are.
func truthy(in Inputs, path string) bool {
	v, ok := in.get(path)
	if !ok || v.IsNull() {
		return false
	}
	if !known(v) {
		return true
	}
	switch {
	case v.IsBool():
		return v.BoolValue()
	case v.IsString():
		return v.StringValue() != ""
	case v.IsNumber():
		return v.NumberValue() != 0
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func intOf(v resource.PropertyValue) (int, bool) {
	v = plain(v)
	if !v.IsNumber() {
		return 0, false
	}
	f := v.NumberValue()
	if f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

func stringOf(v resource.PropertyValue) (string, bool) {
	v = plain(v)
	if !v.IsString() {
		return "", false
	}
	return v.StringValue(), true
}
