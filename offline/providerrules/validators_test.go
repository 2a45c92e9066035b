package providerrules

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// The validators' tables: each row a value at an edge that passes, and one a step past it that fails with the
// provider's message word for word (the Terraform plugin SDK v2.37.0's helper/validation and helper/schema, the
// provider's internal/verify); a row that passes wants no message, so that every row can fail.

func str(s string) resource.PropertyValue                    { return resource.NewStringProperty(s) }
func num(n float64) resource.PropertyValue                   { return resource.NewNumberProperty(n) }
func boolean(b bool) resource.PropertyValue                  { return resource.NewBoolProperty(b) }
func null() resource.PropertyValue                           { return resource.NewNullProperty() }
func secret(v resource.PropertyValue) resource.PropertyValue { return resource.MakeSecret(v) }
func arr(vs ...resource.PropertyValue) resource.PropertyValue {
	if vs == nil {
		vs = []resource.PropertyValue{}
	}
	return resource.NewArrayProperty(vs)
}
func obj(m resource.PropertyMap) resource.PropertyValue { return resource.NewObjectProperty(m) }

// output is a known output: a value another resource's output resolved to at a preview.
func output(v resource.PropertyValue) resource.PropertyValue {
	return resource.NewOutputProperty(resource.Output{Element: v, Known: true})
}

// unknown is a value unknown at a preview, as the engine sends it; unknownOutput the same as an output.
var (
	unknown       = resource.MakeComputed(resource.NewStringProperty(""))
	unknownOutput = resource.NewOutputProperty(resource.Output{Element: resource.NewStringProperty(""), Known: false})
)

func msgs(m ...string) []string { return m }

type row struct {
	name string
	v    resource.PropertyValue
	in   resource.PropertyMap // the resource's other inputs
	want []string             // nil: the value passes
}

func table(t *testing.T, attr string, f Validator, rows []row) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := f(attr, r.v, Inputs{r.in})
			if !slices.Equal(got, r.want) {
				t.Errorf("%s = %v:\n got %q\nwant %q", attr, r.v, got, r.want)
			}
		})
	}
}

func TestIntBetween(t *testing.T) {
	table(t, "max_message_size", IntBetween(1024, 262144), []row{
		{name: "low edge", v: num(1024)},
		{name: "below", v: num(1023), want: msgs("expected max_message_size to be in the range (1024 - 262144), got 1023")},
		{name: "high edge", v: num(262144)},
		{name: "above", v: num(262145), want: msgs("expected max_message_size to be in the range (1024 - 262144), got 262145")},
		{name: "secret", v: secret(num(1023)), want: msgs("expected max_message_size to be in the range (1024 - 262144), got 1023")},
		{name: "known output", v: output(num(262145)), want: msgs("expected max_message_size to be in the range (1024 - 262144), got 262145")},
		{name: "not a number", v: str("1024"), want: msgs("expected type of max_message_size to be integer")},
		{name: "not an integer", v: num(1024.5), want: msgs("expected type of max_message_size to be integer")},
	})
	table(t, "retry", IntBetween(-1, -1), []row{
		{name: "negative edge", v: num(-1)},
		{name: "below negative", v: num(-2), want: msgs("expected retry to be in the range (-1 - -1), got -2")},
		{name: "above negative", v: num(0), want: msgs("expected retry to be in the range (-1 - -1), got 0")},
	})
}

func TestIntAtLeast(t *testing.T) {
	table(t, "reserved_concurrent_executions", IntAtLeast(-1), []row{
		{name: "edge", v: num(-1)},
		{name: "above", v: num(1000)},
		{name: "below", v: num(-2), want: msgs("expected reserved_concurrent_executions to be at least (-1), got -2")},
		{name: "not a number", v: str("x"), want: msgs("expected type of reserved_concurrent_executions to be integer")},
		{name: "not an integer", v: num(0.5), want: msgs("expected type of reserved_concurrent_executions to be integer")},
	})
}

func TestIntAtMost(t *testing.T) {
	table(t, "attempts", IntAtMost(5), []row{
		{name: "edge", v: num(5)},
		{name: "below", v: num(-5)},
		{name: "above", v: num(6), want: msgs("expected attempts to be at most (5), got 6")},
		{name: "not a number", v: boolean(true), want: msgs("expected type of attempts to be integer")},
	})
}

func TestIntInSlice(t *testing.T) {
	table(t, "period", IntInSlice(10, 20, 30), []row{
		{name: "first", v: num(10)},
		{name: "last", v: num(30)},
		{name: "beside first", v: num(9), want: msgs("expected period to be one of [10 20 30], got 9")},
		{name: "beside last", v: num(31), want: msgs("expected period to be one of [10 20 30], got 31")},
		{name: "not a number", v: str("10"), want: msgs("expected type of period to be integer")},
	})
}

func TestIntDivisibleBy(t *testing.T) {
	table(t, "period", IntDivisibleBy(60), []row{
		{name: "zero", v: num(0)},
		{name: "divisor", v: num(60)},
		{name: "multiple", v: num(120)},
		{name: "negative multiple", v: num(-60)},
		{name: "one past", v: num(61), want: msgs("expected period to be divisible by 60, got: 61")},
		{name: "one short", v: num(59), want: msgs("expected period to be divisible by 60, got: 59")},
		{name: "not a number", v: str("60"), want: msgs("expected type of period to be integer")},
	})
}

func TestStringLenBetween(t *testing.T) {
	table(t, "name", StringLenBetween(1, 3), []row{
		{name: "low edge", v: str("a")},
		{name: "empty", v: str(""), want: msgs("expected length of name to be in the range (1 - 3), got ")},
		{name: "high edge", v: str("abc")},
		{name: "above", v: str("abcd"), want: msgs("expected length of name to be in the range (1 - 3), got abcd")},
		{name: "bytes, not runes", v: str("éé"), want: msgs("expected length of name to be in the range (1 - 3), got éé")},
		{name: "secret", v: secret(str("abcd")), want: msgs("expected length of name to be in the range (1 - 3), got abcd")},
		{name: "not a string", v: num(1), want: msgs("expected type of name to be string")},
	})
	table(t, "description", StringLenBetween(0, 2), []row{
		{name: "empty", v: str("")},
		{name: "above", v: str("abc"), want: msgs("expected length of description to be in the range (0 - 2), got abc")},
	})
}

func TestStringInSlice(t *testing.T) {
	table(t, "status", StringInSlice([]string{"Enabled", "Suspended"}, false), []row{
		{name: "first", v: str("Enabled")},
		{name: "last", v: str("Suspended")},
		{name: "case differs", v: str("enabled"), want: msgs(`expected status to be one of ["Enabled" "Suspended"], got enabled`)},
		{name: "prefix", v: str("Enable"), want: msgs(`expected status to be one of ["Enabled" "Suspended"], got Enable`)},
		{name: "empty", v: str(""), want: msgs(`expected status to be one of ["Enabled" "Suspended"], got `)},
		{name: "not a string", v: num(1), want: msgs("expected type of status to be string")},
	})
	table(t, "treat_missing_data", StringInSlice([]string{"breaching", "notBreaching"}, true), []row{
		{name: "exact", v: str("notBreaching")},
		{name: "lower case", v: str("notbreaching")},
		{name: "upper case", v: str("BREACHING")},
		{name: "other", v: str("breach"), want: msgs(`expected treat_missing_data to be one of ["breaching" "notBreaching"], got breach`)},
		{name: "not a string", v: boolean(false), want: msgs("expected type of treat_missing_data to be string")},
	})
}

func TestStringMatch(t *testing.T) {
	re := regexp.MustCompile(`^a+$`)
	table(t, "name", StringMatch(re, "must be a's"), []row{
		{name: "matches", v: str("aa")},
		{name: "does not", v: str("ab"), want: msgs("invalid value for name (must be a's)")},
		{name: "empty", v: str(""), want: msgs("invalid value for name (must be a's)")},
		{name: "not a string", v: num(1), want: msgs("expected type of name to be string")},
	})
	table(t, "name", StringMatch(re, ""), []row{
		{name: "matches", v: str("a")},
		{name: "does not", v: str("ab"), want: msgs(`expected value of name to match regular expression "^a+$", got ab`)},
		{name: "not a string", v: arr(), want: msgs("expected type of name to be string")},
	})
}

func TestStringDoesNotMatch(t *testing.T) {
	re := regexp.MustCompile("[“‘]")
	table(t, "description", StringDoesNotMatch(re, "cannot contain specially formatted single or double quotes: [“‘]"), []row{
		{name: "plain quotes", v: str(`"plain" 'quotes'`)},
		{name: "formatted quote", v: str("“quoted"), want: msgs("invalid value for description (cannot contain specially formatted single or double quotes: [“‘])")},
		{name: "not a string", v: num(1), want: msgs("expected type of description to be string")},
	})
	table(t, "description", StringDoesNotMatch(regexp.MustCompile(`b`), ""), []row{
		{name: "no b", v: str("aca")},
		{name: "a b", v: str("abc"), want: msgs(`expected value of description to not match regular expression "b", got abc`)},
		{name: "not a string", v: num(1), want: msgs("expected type of description to be string")},
	})
}

func TestStringIsNotEmpty(t *testing.T) {
	table(t, "name", StringIsNotEmpty(), []row{
		{name: "one character", v: str("a")},
		{name: "blank", v: str(" ")},
		{name: "empty", v: str(""), want: msgs(`expected "name" to not be an empty string, got `)},
		{name: "not a string", v: num(0), want: msgs(`expected type of "name" to be string`)},
	})
}

func TestStringIsJSON(t *testing.T) {
	table(t, "policy", StringIsJSON(), []row{
		{name: "empty (NormalizeJsonString takes it)", v: str("")},
		{name: "object", v: str(`{"a":[1,2]}`)},
		{name: "array", v: str(`[1]`)},
		{name: "scalar", v: str(`"x"`)},
		{name: "cut short", v: str(`{"a":`), want: msgs(`"policy" contains an invalid JSON: unexpected end of JSON input`)},
		{name: "not JSON", v: str("nope"), want: msgs(`"policy" contains an invalid JSON: invalid character 'o' in literal null (expecting 'u')`)},
		{name: "not a string", v: num(1), want: msgs("expected type of policy to be string")},
	})
}

func TestNoZeroValues(t *testing.T) {
	table(t, "addon_name", NoZeroValues(), []row{
		{name: "string", v: str("vpc-cni")},
		{name: "empty string", v: str(""), want: msgs("addon_name must not be empty, got ")},
		{name: "secret empty string", v: secret(str("")), want: msgs("addon_name must not be empty, got ")},
		{name: "number", v: num(1)},
		{name: "negative", v: num(-1)},
		{name: "zero", v: num(0), want: msgs("addon_name must not be zero, got 0")},
		{name: "known output zero", v: output(num(0)), want: msgs("addon_name must not be zero, got 0")},
		{name: "bool (not checked)", v: boolean(false)},
	})
}

func TestAll(t *testing.T) {
	f := All(StringLenBetween(1, 2), StringMatch(regexp.MustCompile(`^a+$`), ""))
	table(t, "name", f, []row{
		{name: "both pass", v: str("aa")},
		{name: "first fails", v: str("aaa"), want: msgs("expected length of name to be in the range (1 - 2), got aaa")},
		{name: "second fails", v: str("b"), want: msgs(`expected value of name to match regular expression "^a+$", got b`)},
		{name: "both fail, in order", v: str("bbb"), want: msgs(
			"expected length of name to be in the range (1 - 2), got bbb",
			`expected value of name to match regular expression "^a+$", got bbb`)},
	})
	table(t, "name", All(), []row{{name: "none", v: str("x")}})
}

func TestBefore(t *testing.T) {
	f := Before(ConflictsWith(map[string]string{"namePrefix": "name_prefix"}), StringLenBetween(1, 3))
	table(t, "name", f, []row{
		{name: "alone, valid", v: str("abc")},
		{name: "alone, invalid", v: str("abcd"), want: msgs("expected length of name to be in the range (1 - 3), got abcd")},
		{name: "conflict reported alone", v: str("abcd"), in: resource.PropertyMap{"namePrefix": str("p")},
			want: msgs(`Conflicting configuration arguments. "name": conflicts with name_prefix`)},
		{name: "conflict with a valid value", v: str("abc"), in: resource.PropertyMap{"namePrefix": str("p")},
			want: msgs(`Conflicting configuration arguments. "name": conflicts with name_prefix`)},
	})
}

func TestAny(t *testing.T) {
	f := Any(IntInSlice(10, 20, 30), IntDivisibleBy(60))
	table(t, "period", f, []row{
		{name: "first passes", v: num(10)},
		{name: "second passes", v: num(120)},
		{name: "first passes, second would not", v: num(20)},
		{name: "none passes: every message", v: num(45), want: msgs(
			"expected period to be one of [10 20 30], got 45",
			"expected period to be divisible by 60, got: 45")},
	})
	table(t, "x", Any(), []row{{name: "none", v: num(1)}})
}

func TestDiag(t *testing.T) {
	f := Diag(IntBetween(0, 185))
	table(t, "target.0.retry_policy.0.maximum_retry_attempts", f, []row{
		{name: "edge", v: num(185)},
		{name: "past", v: num(186), want: msgs("expected maximum_retry_attempts to be in the range (0 - 185), got 186")},
	})
	table(t, "architectures.0", Diag(StringLenBetween(0, 1)), []row{
		{name: "element: the list's name", v: str("ab"), want: msgs("expected length of architectures to be in the range (0 - 1), got ab")},
	})
	table(t, "kms_key_arn", Diag(ValidARN()), []row{
		{name: "top level", v: str("x"), want: msgs(`"kms_key_arn" (x) is an invalid ARN: arn: invalid prefix`)},
	})
}

func TestLastAttribute(t *testing.T) {
	for attr, want := range map[string]string{
		"name":                           "name",
		"architectures.0":                "architectures",
		"a.0.b":                          "b",
		"target.0.retry_policy.0.x.12":   "x",
		"flexible_time_window.0.mode":    "mode",
		"metric_query.3.metric.0.stat.1": "stat",
		"0":                              "", // no attribute step: ToDiagFunc's key stays ""
		"0.1":                            "",
	} {
		if got := lastAttribute(attr); got != want {
			t.Errorf("lastAttribute(%q) = %q, want %q", attr, got, want)
		}
	}
}

func TestEnum(t *testing.T) {
	table(t, "architectures.0", Enum("x86_64", "arm64"), []row{
		{name: "first", v: str("x86_64")},
		{name: "last", v: str("arm64")},
		{name: "case differs", v: str("ARM64"), want: msgs(`expected architectures to be one of ["x86_64" "arm64"], got ARM64`)},
		{name: "not a string", v: num(64), want: msgs("expected type of architectures to be string")},
	})
}

func TestConflictsWith(t *testing.T) {
	f := ConflictsWith(map[string]string{"namePrefix": "name_prefix", "rule.defaultRetention.years": "rule.0.default_retention.0.years"})
	const prefix = `Conflicting configuration arguments. "name": conflicts with name_prefix`
	const years = `Conflicting configuration arguments. "name": conflicts with rule.0.default_retention.0.years`
	table(t, "name", f, []row{
		{name: "alone", v: str("q")},
		{name: "the other null", v: str("q"), in: resource.PropertyMap{"namePrefix": null()}},
		{name: "the other unknown", v: str("q"), in: resource.PropertyMap{"namePrefix": unknown}},
		{name: "the other an unknown output", v: str("q"), in: resource.PropertyMap{"namePrefix": unknownOutput}},
		{name: "the other set", v: str("q"), in: resource.PropertyMap{"namePrefix": str("p")}, want: msgs(prefix)},
		{name: "the other empty (configured)", v: str("q"), in: resource.PropertyMap{"namePrefix": str("")}, want: msgs(prefix)},
		{name: "the other false (configured)", v: str("q"), in: resource.PropertyMap{"namePrefix": boolean(false)}, want: msgs(prefix)},
		{name: "the other secret", v: str("q"), in: resource.PropertyMap{"namePrefix": secret(str("p"))}, want: msgs(prefix)},
		{name: "nested other", v: str("q"), in: resource.PropertyMap{
			"rule": obj(resource.PropertyMap{"defaultRetention": obj(resource.PropertyMap{"years": num(1)})}),
		}, want: msgs(years)},
		{name: "nested other absent", v: str("q"), in: resource.PropertyMap{
			"rule": obj(resource.PropertyMap{"defaultRetention": obj(resource.PropertyMap{"days": num(1)})}),
		}},
		{name: "both set: the first in Pulumi's order, alone", v: str("q"), in: resource.PropertyMap{
			"namePrefix": str("p"),
			"rule":       obj(resource.PropertyMap{"defaultRetention": obj(resource.PropertyMap{"years": num(1)})}),
		}, want: msgs(prefix)},
		{name: "own value not wholly known: deferred", v: arr(str("a"), unknown), in: resource.PropertyMap{"namePrefix": str("p")}},
		{name: "own value with an unknown field: deferred", v: obj(resource.PropertyMap{"enabled": unknownOutput}),
			in: resource.PropertyMap{"namePrefix": str("p")}},
		{name: "own value a secret list, known", v: secret(arr(str("a"))), in: resource.PropertyMap{"namePrefix": str("p")}, want: msgs(prefix)},
	})
}

func TestExactlyOneOf(t *testing.T) {
	f := ExactlyOneOf(map[string]string{"imageUri": "image_uri", "s3Bucket": "s3_bucket"})
	table(t, "filename", f, []row{
		{name: "alone", v: str("code.zip")},
		{name: "others null", v: str("code.zip"), in: resource.PropertyMap{"imageUri": null(), "s3Bucket": null()}},
		{name: "other unknown", v: str("code.zip"), in: resource.PropertyMap{"imageUri": unknown}},
		{name: "one other", v: str("code.zip"), in: resource.PropertyMap{"imageUri": str("i")}, want: msgs(
			"Invalid combination of arguments. \"filename\": only one of `filename,image_uri,s3_bucket` can be specified, but `filename,image_uri` were specified.")},
		{name: "the other other", v: str("code.zip"), in: resource.PropertyMap{"s3Bucket": str("")}, want: msgs(
			"Invalid combination of arguments. \"filename\": only one of `filename,image_uri,s3_bucket` can be specified, but `filename,s3_bucket` were specified.")},
		{name: "all", v: str("code.zip"), in: resource.PropertyMap{"imageUri": str("i"), "s3Bucket": str("b")}, want: msgs(
			"Invalid combination of arguments. \"filename\": only one of `filename,image_uri,s3_bucket` can be specified, but `filename,image_uri,s3_bucket` were specified.")},
	})
	table(t, "zeta", ExactlyOneOf(map[string]string{"alpha": "alpha"}), []row{
		{name: "sorted, the property last", v: str("z"), in: resource.PropertyMap{"alpha": str("a")}, want: msgs(
			"Invalid combination of arguments. \"zeta\": only one of `alpha,zeta` can be specified, but `alpha,zeta` were specified.")},
	})
}

func TestRequiredWith(t *testing.T) {
	f := RequiredWith(map[string]string{"enableKeyRotation": "enable_key_rotation"})
	const missing = "Missing required argument. \"rotation_period_in_days\": all of `enable_key_rotation,rotation_period_in_days` must be specified"
	table(t, "rotation_period_in_days", f, []row{
		{name: "with it true", v: num(90), in: resource.PropertyMap{"enableKeyRotation": boolean(true)}},
		{name: "with it false (specified)", v: num(90), in: resource.PropertyMap{"enableKeyRotation": boolean(false)}},
		{name: "with it unknown", v: num(90), in: resource.PropertyMap{"enableKeyRotation": unknown}},
		{name: "without it", v: num(90), want: msgs(missing)},
		{name: "with it null", v: num(90), in: resource.PropertyMap{"enableKeyRotation": null()}, want: msgs(missing)},
	})
	g := RequiredWith(map[string]string{"b": "b", "a": "a"})
	table(t, "c", g, []row{
		{name: "both", v: num(1), in: resource.PropertyMap{"a": num(1), "b": num(1)}},
		{name: "one missing", v: num(1), in: resource.PropertyMap{"b": num(1)}, want: msgs(
			"Missing required argument. \"c\": all of `a,b,c` must be specified")},
		{name: "the other missing", v: num(1), in: resource.PropertyMap{"a": num(1)}, want: msgs(
			"Missing required argument. \"c\": all of `a,b,c` must be specified")},
	})
}

func TestMaxItems(t *testing.T) {
	table(t, "architectures", MaxItems(1), []row{
		{name: "empty", v: arr()},
		{name: "edge", v: arr(str("arm64"))},
		{name: "past", v: arr(str("arm64"), str("x86_64")), want: msgs(
			"Too many list items. Attribute architectures supports 1 item maximum, but config has 2 declared.")},
		{name: "secret list", v: secret(arr(str("a"), str("b"))), want: msgs(
			"Too many list items. Attribute architectures supports 1 item maximum, but config has 2 declared.")},
		{name: "an element unknown: not counted yet", v: arr(str("a"), unknown)},
		{name: "an element an unknown output", v: arr(unknownOutput, str("a"), str("b"))},
		{name: "not a list", v: str("ab")},
	})
}

func TestMinItems(t *testing.T) {
	table(t, "subnet_ids", MinItems(2), []row{
		{name: "edge", v: arr(str("a"), str("b"))},
		{name: "short", v: arr(str("a")), want: msgs(
			"Not enough list items. Attribute subnet_ids requires 2 item minimum, but config has only 1 declared.")},
		{name: "empty", v: arr(), want: msgs(
			"Not enough list items. Attribute subnet_ids requires 2 item minimum, but config has only 0 declared.")},
		{name: "known output list", v: output(arr(str("a"))), want: msgs(
			"Not enough list items. Attribute subnet_ids requires 2 item minimum, but config has only 1 declared.")},
		{name: "an element unknown: not counted yet", v: arr(unknown)},
		{name: "a nested unknown", v: arr(obj(resource.PropertyMap{"id": unknown}))},
		{name: "not a list", v: str("a")},
	})
}

func TestEachKnown(t *testing.T) {
	table(t, "x", EachKnown(StringLenBetween(1, 2)), []row{
		{name: "every element", v: arr(str("a"), str("abc"), unknown, null(), str(""), secret(str("abcd"))), want: msgs(
			"expected length of x.1 to be in the range (1 - 2), got abc",
			"expected length of x.4 to be in the range (1 - 2), got ",
			"expected length of x.5 to be in the range (1 - 2), got abcd")},
		{name: "secret element null", v: arr(secret(null()), unknownOutput)},
		{name: "all valid", v: secret(arr(str("a"), str("ab")))},
		{name: "not a list", v: str("abc")},
	})
}

func TestProviderConfig(t *testing.T) {
	table(t, "assume_role.0.session_name", ProviderConfig(All(StringLenBetween(2, 64), StringMatch(regexp.MustCompile(`^a+$`), ""))), []row{
		{name: "valid", v: str("aa")},
		{name: "every problem prefixed", v: str("b"), want: msgs(
			"could not validate provider configuration: expected length of assume_role.0.session_name to be in the range (2 - 64), got b",
			`could not validate provider configuration: expected value of assume_role.0.session_name to match regular expression "^a+$", got b`)},
	})
}

func TestValidARN(t *testing.T) {
	const account = `^(aws|aws-managed|third-party|\d{12}|cw.{10})$`
	table(t, "role_arn", ValidARN(), []row{
		{name: "empty", v: str("")},
		{name: "role", v: str("arn:aws:iam::123456789012:role/x")},
		{name: "aws account", v: str("arn:aws-us-gov:iam::aws:policy/ReadOnlyAccess")},
		{name: "no account, no region", v: str("arn:aws:s3:::bucket")},
		{name: "cw account", v: str("arn:aws:logs:eu-west-1:cw0123456789:x")},
		{name: "region", v: str("arn:aws-cn:sqs:cn-north-1:123456789012:q")},
		{name: "no prefix", v: str("role/x"), want: msgs(`"role_arn" (role/x) is an invalid ARN: arn: invalid prefix`)},
		{name: "five sections", v: str("arn:aws:iam::123456789012"), want: msgs(`"role_arn" (arn:aws:iam::123456789012) is an invalid ARN: arn: not enough sections`)},
		{name: "no partition", v: str("arn::iam::123456789012:role/x"), want: msgs(`"role_arn" (arn::iam::123456789012:role/x) is an invalid ARN: missing partition value`)},
		{name: "bad partition", v: str("arn:AWS:iam::123456789012:role/x"), want: msgs(
			`"role_arn" (arn:AWS:iam::123456789012:role/x) is an invalid ARN: invalid partition value (expecting to match regular expression: ^aws(-[a-z]+)*$)`)},
		{name: "bad region", v: str("arn:aws:sqs:eu-west:123456789012:q"), want: msgs(
			`"role_arn" (arn:aws:sqs:eu-west:123456789012:q) is an invalid ARN: invalid region value (expecting to match regular expression: ^[a-z]{2}(-[a-z]+)+-\d$)`)},
		{name: "short account", v: str("arn:aws:sqs:eu-west-1:12345678901:q"), want: msgs(
			`"role_arn" (arn:aws:sqs:eu-west-1:12345678901:q) is an invalid ARN: invalid account ID value (expecting to match regular expression: ` + account + `)`)},
		{name: "no resource", v: str("arn:aws:sqs:eu-west-1:123456789012:"), want: msgs(
			`"role_arn" (arn:aws:sqs:eu-west-1:123456789012:) is an invalid ARN: missing resource value`)},
		{name: "every problem", v: str("arn::sqs:EU:1:"), want: msgs(
			`"role_arn" (arn::sqs:EU:1:) is an invalid ARN: missing partition value`,
			`"role_arn" (arn::sqs:EU:1:) is an invalid ARN: invalid region value (expecting to match regular expression: ^[a-z]{2}(-[a-z]+)+-\d$)`,
			`"role_arn" (arn::sqs:EU:1:) is an invalid ARN: invalid account ID value (expecting to match regular expression: `+account+`)`,
			`"role_arn" (arn::sqs:EU:1:) is an invalid ARN: missing resource value`)},
		{name: "not a string", v: num(1), want: msgs("expected type of role_arn to be string")},
	})
}

func TestParseARN(t *testing.T) {
	got, err := parseARN("arn:aws:sqs:eu-west-1:123456789012:queue:with:colons")
	want := arnParts{partition: "aws", service: "sqs", region: "eu-west-1", account: "123456789012", resource: "queue:with:colons"}
	if err != nil || got != want {
		t.Errorf("parseARN = %+v, %v; want %+v", got, err, want)
	}
	if _, err := parseARN("arn:a:b:c:d"); err == nil || err.Error() != "arn: not enough sections" {
		t.Errorf("parseARN of five sections: %v", err)
	}
	if _, err := parseARN("ar:a:b:c:d:e"); err == nil || err.Error() != "arn: invalid prefix" {
		t.Errorf("parseARN without arn: %v", err)
	}
}

func TestValidIAMPolicyJSON(t *testing.T) {
	const p = `"policy" contains an invalid JSON policy: `
	table(t, "policy", ValidIAMPolicyJSON(), []row{
		{name: "object", v: str(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`)},
		{name: "empty object", v: str(`{}`)},
		{name: "trailing blank", v: str("{}\n")},
		{name: "empty", v: str(""), want: msgs(`"policy" is an empty string, which is not a valid JSON value`)},
		{name: "one character", v: str("{"), want: msgs(p + "unexpected end of JSON input, at byte offset 1")},
		{name: "leading space", v: str(" {}"), want: msgs(p + "leading space characters are not allowed")},
		{name: "leading tab", v: str("\t{}"), want: msgs(p + "leading space characters are not allowed")},
		{name: "leading return", v: str("\r{}"), want: msgs(p + "leading space characters are not allowed")},
		{name: "leading newline", v: str("\n{}"), want: msgs(p + "leading space characters are not allowed")},
		{name: "a filename", v: str(`"policy.json"`), want: msgs(p + "contains a JSON-encoded string, not a JSON-encoded object (have you passed a JSON-encoded filename instead of the content of that file?)")},
		{name: "double-encoded", v: str(`"{\"a\":1}"`), want: msgs(p + "contains a JSON-encoded string, not a JSON-encoded object (have you double-encoded your JSON data?)")},
		{name: "a string", v: str(`"hello"`), want: msgs(p + "contains a JSON-encoded string, not a JSON-encoded object")},
		{name: "a broken string", v: str(`"unterminated`), want: msgs(p + "contains a JSON-encoded string, not a JSON-encoded object")},
		{name: "an array", v: str(`[{}]`), want: msgs(p + "contains a JSON array, not a JSON object")},
		{name: "null", v: str(`null`), want: msgs(p + "not a JSON object")},
		{name: "cut short", v: str(`{"a":`), want: msgs(p + "unexpected end of JSON input, at byte offset 5")},
		{name: "trailing brace", v: str(`{"a":1}}`), want: msgs(p + "invalid character '}' after top-level value, at byte offset 8")},
		{name: "bad key", v: str(`{bad`), want: msgs(p + "invalid character 'b' looking for beginning of object key string, at byte offset 2")},
		{name: "duplicate key", v: str(`{"a":1,"a":2}`), want: msgs(`"policy" contains duplicate JSON keys: duplicate key "a"`)},
		{name: "nested duplicates", v: str(`{"S":[{"x":1,"x":2}],"T":{"y":1,"y":1},"U":[[{"z":1}]]}`), want: msgs(
			`"policy" contains duplicate JSON keys: duplicate key "S.0.x"` + "\n" + `duplicate key "T.y"`)},
		{name: "same key in two objects", v: str(`{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}`)},
		{name: "not a string", v: num(1), want: msgs("expected type of policy to be string")},
	})
}

func TestJSONNoDuplicateKeys(t *testing.T) {
	for s, want := range map[string]string{
		`{"a":1}`:                       "",
		`{"a":[1,{"b":2,"b":3}]}`:       `duplicate key "a.1.b"`,
		`{"a":1,"a":2,"a":3}`:           "duplicate key \"a\"\nduplicate key \"a\"",
		`[]`:                            "unmarshaling input: json: cannot unmarshal array into Go value of type map[string]interface {}",
		`{`:                             "unmarshaling input: unexpected end of JSON input",
		`{"a":{"b":{"c":1,"c":1}}}`:     `duplicate key "a.b.c"`,
		`{"l":[{"k":1},{"k":1,"k":1}]}`: `duplicate key "l.1.k"`,
	} {
		err := jsonNoDuplicateKeys(s)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("jsonNoDuplicateKeys(%s) = %q, want %q", s, got, want)
		}
	}
}

// TestCheckJSONTokenErrors: the walk returns the decoder's error as aws-sdk-go-base's checkToken does (what
// JSONNoDuplicateKeys never meets, having parsed the value first), dropping the duplicates found before it.
func TestCheckJSONTokenErrors(t *testing.T) {
	for s, want := range map[string]string{
		``:               "EOF",
		`{1:2}`:          "invalid character '1'",
		`{"a":1`:         "EOF",
		`[1`:             "EOF",
		`[{"a":1,"a":2}`: "EOF",
		`{"a":1,"a":2}`:  `duplicate key "a"`,
		`1`:              "",
	} {
		got := ""
		if err := checkJSONToken(json.NewDecoder(strings.NewReader(s)), nil); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("checkJSONToken(%s) = %q, want %q", s, got, want)
		}
	}
}

func TestValidStringIsJSONOrYAML(t *testing.T) {
	table(t, "template_body", ValidStringIsJSONOrYAML(), []row{
		{name: "empty", v: str("")},
		{name: "JSON", v: str(`{"Resources":{}}`)},
		{name: "JSON after blanks", v: str("  \n{\"Resources\":{}}")},
		{name: "broken JSON", v: str("{bad"), want: msgs(`"template_body" contains an invalid JSON: invalid character 'b' looking for beginning of object key string`)},
		{name: "broken JSON after blanks", v: str(" {bad"), want: msgs(`"template_body" contains an invalid JSON: invalid character 'b' looking for beginning of object key string`)},
		{name: "YAML", v: str("Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n")},
		{name: "a JSON array is YAML", v: str(`["a"]`)},
		{name: "broken YAML", v: str("a: ["), want: msgs(`"template_body" contains an invalid YAML: yaml: line 1: did not find expected node content`)},
		{name: "a tab", v: str("\t- x\n"), want: msgs(`"template_body" contains an invalid YAML: yaml: found character that cannot start any token`)},
		{name: "not a string", v: num(1), want: msgs("expected type of template_body to be string")},
	})
}

func TestFrameworkARN(t *testing.T) {
	table(t, "role_arn", FrameworkARN(), []row{
		{name: "role", v: str("arn:aws:iam::123456789012:role/x")},
		{name: "five colons, nothing else", v: str("arn:::::")},
		{name: "four colons", v: str("arn:aws:iam::123456789012"), want: msgs(`ARN Type Validation Error. Value "arn:aws:iam::123456789012" cannot be parsed as an ARN.`)},
		{name: "no prefix", v: str("xarn:aws:iam::1:role/x"), want: msgs(`ARN Type Validation Error. Value "xarn:aws:iam::1:role/x" cannot be parsed as an ARN.`)},
		{name: "empty", v: str(""), want: msgs(`ARN Type Validation Error. Value "" cannot be parsed as an ARN.`)},
		{name: "not a string: the framework's type checks", v: num(1)},
	})
}

func TestNormalizeJSON(t *testing.T) {
	for s, ok := range map[string]bool{"": true, "{}": true, "1": true, "{": false, " ": false, "nul": false} {
		if err := normalizeJSON(s); (err == nil) != ok {
			t.Errorf("normalizeJSON(%q) = %v, want ok %v", s, err, ok)
		}
	}
}

func TestConfigured(t *testing.T) {
	in := Inputs{resource.PropertyMap{
		"s": str(""), "f": boolean(false), "z": num(0), "n": null(), "u": unknown, "o": unknownOutput,
		"k": output(str("x")), "sec": secret(null()), "nested": obj(resource.PropertyMap{"a": str("x")}),
	}}
	for path, want := range map[string]bool{
		"s": true, "f": true, "z": true, "k": true, "nested": true, "nested.a": true,
		"n": false, "u": false, "o": false, "absent": false, "sec": false, "nested.b": false, "s.x": false,
	} {
		if got := configured(in, path); got != want {
			t.Errorf("configured(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestTruthy(t *testing.T) {
	in := Inputs{resource.PropertyMap{
		"t": boolean(true), "f": boolean(false), "s": str("x"), "e": str(""), "one": num(1), "zero": num(0), "neg": num(-1),
		"n": null(), "u": unknown, "o": unknownOutput, "list": arr(), "map": obj(resource.PropertyMap{}),
		"sec": secret(boolean(false)), "secT": secret(str("x")),
	}}
	for path, want := range map[string]bool{
		"t": true, "s": true, "one": true, "neg": true, "u": true, "o": true, "list": true, "map": true, "secT": true,
		"f": false, "e": false, "zero": false, "n": false, "absent": false, "sec": false,
	} {
		if got := truthy(in, path); got != want {
			t.Errorf("truthy(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestWhollyKnown(t *testing.T) {
	for name, c := range map[string]struct {
		v    resource.PropertyValue
		want bool
	}{
		"string":                   {str("a"), true},
		"unknown":                  {unknown, false},
		"unknown output":           {unknownOutput, false},
		"secret unknown":           {secret(unknown), false},
		"known output":             {output(arr(str("a"))), true},
		"list":                     {arr(str("a"), num(1)), true},
		"list with an unknown":     {arr(str("a"), unknown), false},
		"object":                   {obj(resource.PropertyMap{"a": arr(str("x"))}), true},
		"object with deep unknown": {obj(resource.PropertyMap{"a": arr(obj(resource.PropertyMap{"b": unknownOutput}))}), false},
		"null":                     {null(), true},
	} {
		if got := whollyKnown(c.v); got != c.want {
			t.Errorf("whollyKnown(%s) = %v, want %v", name, got, c.want)
		}
	}
}

func TestIntOfAndStringOf(t *testing.T) {
	for name, c := range map[string]struct {
		v    resource.PropertyValue
		n    int
		isOK bool
	}{
		"integer":      {num(3), 3, true},
		"negative":     {num(-3), -3, true},
		"fraction":     {num(3.5), 0, false},
		"secret":       {secret(num(7)), 7, true},
		"known output": {output(num(8)), 8, true},
		"string":       {str("3"), 0, false},
	} {
		if n, ok := intOf(c.v); n != c.n || ok != c.isOK {
			t.Errorf("intOf(%s) = %d, %v; want %d, %v", name, n, ok, c.n, c.isOK)
		}
	}
	if s, ok := stringOf(secret(output(str("x")))); s != "x" || !ok {
		t.Errorf("stringOf(secret output) = %q, %v", s, ok)
	}
	if s, ok := stringOf(num(1)); s != "" || ok {
		t.Errorf("stringOf(number) = %q, %v", s, ok)
	}
}

func TestSortedKeys(t *testing.T) {
	got := sortedKeys(map[string]string{"b": "1", "a": "2", "c": "3"})
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("sortedKeys = %v", got)
	}
	if got := sortedKeys(nil); len(got) != 0 {
		t.Errorf("sortedKeys(nil) = %v", got)
	}
}
