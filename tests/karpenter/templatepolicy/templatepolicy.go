// Package templatepolicy copies the controller's IAM policies out of a Karpenter getting-started CloudFormation
// template (website/content/en/<version>/getting-started/getting-started-with-karpenter/cloudformation.yaml in
// github.com/aws/karpenter-provider-aws) into the file the contract tests read (tests/karpenter/<version>/
// testdata/controller-policy.json), keeping their ${...} placeholders and recording where they came from.
//
// The controller's policies are the template's AWS::IAM::ManagedPolicy resources (the node role uses only AWS
// managed policies; the queue's policy is an AWS::SQS::QueuePolicy).
package templatepolicy

import (
	"encoding/json"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// File is where a version module keeps its template's policies.
const File = "testdata/controller-policy.json"

// License is the template's (Karpenter's).
const License = "Apache-2.0 (github.com/aws/karpenter-provider-aws)"

// Extract is the file this package writes and the contract tests read.
type Extract struct {
	// Source is the template's address at the commit it was copied from.
	Source string `json:"source"`
	// Derived, when set, says how the policies were made when the release's own template could not be read.
	Derived string `json:"derived,omitempty"`
	// License is the template's license.
	License string `json:"license"`
	// Policies are the controller's policy documents by the template's resource name.
	Policies map[string]json.RawMessage `json:"policies"`
}

// FromTemplate extracts the controller's policies of a template read from source.
func FromTemplate(template []byte, source string) (Extract, error) {
	policies, err := controllerPolicies(template)
	if err != nil {
		return Extract{}, err
	}
	return Extract{Source: source, License: License, Policies: policies}, nil
}

// JSON is the file's content.
func (e Extract) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
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
