// Command templatepolicy copies the controller's IAM policies out of a Karpenter getting-started CloudFormation
// template (website/content/en/<version>/getting-started/getting-started-with-karpenter/cloudformation.yaml in
// github.com/aws/karpenter-provider-aws) into the test data of a version module (tests/karpenter/<version>/
// testdata/controller-policy.json), keeping their ${...} placeholders and recording where they came from:
//
//	cd tests/karpenter
//	go run ./cmd/templatepolicy -source https://github.com/aws/karpenter-provider-aws/blob/<commit>/<path> \
//	  < cloudformation.yaml > v1.14/testdata/controller-policy.json
//
// The controller's policies are the template's AWS::IAM::ManagedPolicy resources (the node role uses only AWS
// managed policies; the queue's policy is an AWS::SQS::QueuePolicy).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// Extract is the file this command writes and the contract tests read.
type Extract struct {
	// Source is the template's address at the commit it was copied from.
	Source string `json:"source"`
	// License is the template's (Karpenter's) license.
	License string `json:"license"`
	// Policies are the controller's policy documents by the template's resource name.
	Policies map[string]json.RawMessage `json:"policies"`
}

func main() {
	source := flag.String("source", "", "the template's address at the commit it is copied from (required)")
	flag.Parse()
	if *source == "" {
		fmt.Fprintln(os.Stderr, "templatepolicy: -source is required")
		os.Exit(2)
	}
	text, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "templatepolicy: reading the template:", err)
		os.Exit(1)
	}
	policies, err := controllerPolicies(text)
	if err != nil {
		fmt.Fprintln(os.Stderr, "templatepolicy:", err)
		os.Exit(1)
	}
	out, err := json.MarshalIndent(Extract{Source: *source, License: "Apache-2.0 (github.com/aws/karpenter-provider-aws)", Policies: policies}, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "templatepolicy:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

// controllerPolicies are the policy documents of the template's AWS::IAM::ManagedPolicy resources. Their
// documents are JSON strings under !Sub, which YAML reads as plain strings with a tag.
func controllerPolicies(template []byte) (map[string]json.RawMessage, error) {
	var t struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				PolicyDocument yaml.Node `yaml:"PolicyDocument"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(template, &t); err != nil {
		return nil, fmt.Errorf("reading the template: %w", err)
	}
	out := map[string]json.RawMessage{}
	for name, r := range t.Resources {
		if r.Type != "AWS::IAM::ManagedPolicy" {
			continue
		}
		doc := r.Properties.PolicyDocument
		if doc.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: the policy document is not a JSON string", name)
		}
		var compact json.RawMessage
		if err := json.Unmarshal([]byte(doc.Value), &compact); err != nil {
			return nil, fmt.Errorf("%s: the policy document: %w", name, err)
		}
		out[name] = compact
	}
	if len(out) == 0 {
		return nil, errors.New("the template has no AWS::IAM::ManagedPolicy")
	}
	return out, nil
}
