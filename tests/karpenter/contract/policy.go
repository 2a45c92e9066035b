package contract

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// TemplateFile is the copy of the controller policies of the version's getting-started CloudFormation template,
// in each version module's testdata (tests/cmd/templatepolicy writes it).
const TemplateFile = "testdata/controller-policy.json"

// narrowings are the template's grants the bus leaves out, by statement: resources it does not grant, and why
// (docs/security.md, "Security").
var narrowings = map[string]map[string]string{
	"AllowScopedEC2InstanceActionsWithTags": {
		"arn:aws:ec2:" + region + ":*:capacity-reservation/*": "RunInstances and CreateFleet never create nor tag a capacity reservation (the template itself drops it from v1.10)",
	},
}

// implied are actions Karpenter's code never calls by name but AWS authorizes as part of a call it makes.
var implied = map[string]string{
	"iam:PassRole":           "RunInstances and CreateFleet pass the node role, through its instance profile",
	"iam:TagInstanceProfile": "CreateInstanceProfile with tags",
}

// notGranted are calls in Karpenter's source that its controller never makes, and why.
var notGranted = map[string]string{
	"sqs:SendMessage": "pkg/providers/sqs's SendMessage is called only by Karpenter's own end-to-end tests (test/pkg/environment)",
}

// services are the IAM action prefixes of the AWS SDK service packages Karpenter imports; an SDK package not
// listed fails the check, so a new service is noticed when a version is added.
var services = map[string]string{
	"arczonalshift": "arc-zonal-shift", "ec2": "ec2", "eks": "eks", "iam": "iam", "pricing": "pricing", "sqs": "sqs", "ssm": "ssm",
	"timestreamwrite": "timestream",
}

// statement is a policy statement with every field in its list form.
type statement struct {
	Sid, Effect string
	Action      []string
	Resource    []string
	Condition   map[string]map[string][]string
}

// UnmarshalJSON reads IAM's string-or-list fields as lists.
func (s *statement) UnmarshalJSON(b []byte) error {
	var raw struct {
		Sid, Effect string
		Action      stringList
		Resource    stringList
		Condition   map[string]map[string]stringList
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*s = statement{Sid: raw.Sid, Effect: raw.Effect, Action: raw.Action, Resource: raw.Resource, Condition: map[string]map[string][]string{}}
	for op, kv := range raw.Condition {
		s.Condition[op] = map[string][]string{}
		for k, v := range kv {
			s.Condition[op][k] = v
		}
	}
	return nil
}

type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*l = []string{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(l))
}

// policyCoversVersion checks the controller policy the stack grants for Karpenter version against the version's
// template, statement by statement (every action the template grants, on no resource it does not, under every
// condition it sets, less the narrowings above), and against the version's source: every AWS call it makes is
// granted, and every action granted is one it calls.
func policyCoversVersion(t *testing.T, version, moduleDir string) {
	const cluster = "alpha"
	rs := renderStack(t, `config:
  aws:region: `+region+`
  karpenter-interruption-bus:namePrefix: `+contractPrefix+`
  karpenter-interruption-bus:clusters:
    - name: `+cluster+`
      karpenter:
        version: "`+version+`"
`)
	var ours struct{ Statement []statement }
	doc := find(t, rs, "aws:iam/rolePolicy:RolePolicy", cluster, "karpenter-controller").Inputs["policy"].(string)
	if err := json.Unmarshal([]byte(doc), &ours); err != nil {
		t.Fatalf("the controller policy: %v", err)
	}
	placeholders := strings.NewReplacer(
		"${AWS::Partition}", "aws", "${AWS::Region}", region, "${AWS::AccountId}", account, "${ClusterName}", cluster,
		"${KarpenterInterruptionQueue.Arn}", "arn:aws:sqs:"+region+":"+account+":"+queuename.For(queuename.Prefix(contractPrefix), cluster),
		"${KarpenterNodeRole.Arn}", "arn:aws:iam::"+account+":role/"+roleName(t, rs, cluster, "KarpenterNode-"),
	)
	template := templateStatements(t, placeholders)

	t.Run("template", func(t *testing.T) {
		bySid := map[string]statement{}
		for _, s := range ours.Statement {
			bySid[s.Sid] = s
		}
		for _, want := range template {
			got, ok := bySid[want.Sid]
			if !ok {
				t.Errorf("the template's %s is not granted", want.Sid)
				continue
			}
			delete(bySid, want.Sid)
			for _, err := range compare(got, want) {
				t.Errorf("%s: %v", want.Sid, err)
			}
		}
		for sid := range bySid {
			t.Errorf("%s is not in the template", sid)
		}
	})

	t.Run("source", func(t *testing.T) {
		called, err := awsCalls(moduleDir)
		if err != nil {
			t.Fatal(err)
		}
		granted := map[string]bool{}
		for _, s := range ours.Statement {
			for _, a := range s.Action {
				granted[a] = true
			}
		}
		for _, action := range slices.Sorted(maps.Keys(called)) {
			if _, ok := notGranted[action]; !granted[action] && !ok {
				t.Errorf("Karpenter %s calls %s (%s), which the controller policy does not grant", version, action, called[action])
			}
			if _, ok := notGranted[action]; granted[action] && ok {
				t.Errorf("the controller policy grants %s, which it should not: %s", action, notGranted[action])
			}
		}
		for _, action := range slices.Sorted(maps.Keys(granted)) {
			if _, ok := implied[action]; called[action] == "" && !ok {
				t.Errorf("the controller policy grants %s, which Karpenter %s never calls", action, version)
			}
		}
	})
}

// templateStatements are the statements of the template's controller policies, placeholders replaced.
func templateStatements(t *testing.T, placeholders *strings.Replacer) []statement {
	t.Helper()
	b, err := os.ReadFile(TemplateFile)
	if err != nil {
		t.Fatal(err)
	}
	var extract struct {
		Source, Derived string
		Policies        map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &extract); err != nil {
		t.Fatalf("%s: %v", TemplateFile, err)
	}
	if extract.Derived != "" {
		t.Logf("%s is not the release's own template: %s", TemplateFile, extract.Derived)
	}
	var out []statement
	for _, name := range slices.Sorted(maps.Keys(extract.Policies)) {
		text := placeholders.Replace(string(extract.Policies[name]))
		if i := strings.Index(text, "${"); i >= 0 {
			t.Fatalf("%s: policy %s has a placeholder the contract does not know: %.40s", extract.Source, name, text[i:])
		}
		var doc struct{ Statement []statement }
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatalf("%s: policy %s: %v", extract.Source, name, err)
		}
		out = append(out, doc.Statement...)
	}
	return out
}

// compare lists where got grants more than want, or less than want without a documented narrowing: the same
// actions, resources among want's, every one of want's conditions with values among want's (fewer values of an
// operator the templates use, none negated, is narrower).
func compare(got, want statement) []error {
	var errs []error
	if got.Effect != want.Effect {
		errs = append(errs, fmt.Errorf("effect %s, the template's %s", got.Effect, want.Effect))
	}
	if !sameSet(got.Action, want.Action) {
		errs = append(errs, fmt.Errorf("actions %v, the template's %v", got.Action, want.Action))
	}
	for _, r := range got.Resource {
		if !slices.Contains(want.Resource, r) {
			errs = append(errs, fmt.Errorf("resource %s is not the template's", r))
		}
	}
	for _, r := range want.Resource {
		if _, narrowed := narrowings[want.Sid][r]; !slices.Contains(got.Resource, r) && !narrowed {
			errs = append(errs, fmt.Errorf("the template's resource %s is not granted, and no narrowing says why", r))
		}
	}
	for op, kv := range want.Condition {
		for key, values := range kv {
			gotValues, ok := got.Condition[op][key]
			if !ok {
				errs = append(errs, fmt.Errorf("the template's condition %s %s is missing", op, key))
				continue
			}
			for _, v := range gotValues {
				if !slices.Contains(values, v) {
					errs = append(errs, fmt.Errorf("condition %s %s allows %q, the template only %v", op, key, v, values))
				}
			}
		}
	}
	return errs
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// awsCalls are the AWS actions Karpenter's source (pkg/ and cmd/ of its module, without tests and fakes) calls,
// each with a file that calls it: an AWS SDK for Go v2 operation is called with a literal of its input type
// (ec2.DescribeInstancesInput{...}) or through its paginator (ec2.NewDescribeInstancesPaginator).
func awsCalls(moduleDir string) (map[string]string, error) {
	calls := map[string]string{}
	for _, top := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(moduleDir, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "fake" || n == "test" || n == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(moduleDir, path)
			return fileCalls(path, func(action string) {
				if calls[action] == "" {
					calls[action] = rel
				}
			})
		})
		if err != nil {
			return nil, fmt.Errorf("reading Karpenter's source: %w", err)
		}
	}
	return calls, nil
}

func fileCalls(path string, call func(action string)) error {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return err
	}
	prefix := map[string]string{} // the file's name for an SDK service package -> IAM action prefix
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		svc, ok := strings.CutPrefix(p, "github.com/aws/aws-sdk-go-v2/service/")
		if !ok || strings.Contains(svc, "/") {
			continue
		}
		if services[svc] == "" {
			return fmt.Errorf("%s imports the AWS SDK's %s, whose IAM prefix the contract does not know", path, svc)
		}
		name := svc
		if im.Name != nil {
			name = im.Name.Name
		}
		prefix[name] = services[svc]
	}
	if len(prefix) == 0 {
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var sel *ast.SelectorExpr
		var op string
		switch x := n.(type) {
		case *ast.CompositeLit:
			if sel, _ = x.Type.(*ast.SelectorExpr); sel != nil {
				op, _ = strings.CutSuffix(sel.Sel.Name, "Input")
				if op == sel.Sel.Name {
					op = ""
				}
			}
		case *ast.CallExpr:
			if sel, _ = x.Fun.(*ast.SelectorExpr); sel != nil && strings.HasPrefix(sel.Sel.Name, "New") && strings.HasSuffix(sel.Sel.Name, "Paginator") {
				op = strings.TrimSuffix(strings.TrimPrefix(sel.Sel.Name, "New"), "Paginator")
			}
		}
		if sel == nil || op == "" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && prefix[id.Name] != "" {
			call(prefix[id.Name] + ":" + op)
		}
		return true
	})
	return nil
}
