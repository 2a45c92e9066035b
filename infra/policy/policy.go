// Package policy builds IAM policy documents as typed values, marshalled to JSON, never string templates.
package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Document is an IAM policy document.
type Document struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement. Principal is "*" or a map such as {"Service": "lambda.amazonaws.com"}.
type Statement struct {
	Sid       string                    `json:"Sid,omitempty"`
	Effect    string                    `json:"Effect"`
	Principal any                       `json:"Principal,omitempty"`
	Action    []string                  `json:"Action"`
	Resource  []string                  `json:"Resource,omitempty"`
	Condition map[string]map[string]any `json:"Condition,omitempty"`
}

// New returns a document of statements.
func New(statements ...Statement) Document {
	return Document{Version: "2012-10-17", Statement: statements}
}

// Allow and Deny build statements.
func Allow(sid string, actions, resources []string) Statement {
	return Statement{Sid: sid, Effect: "Allow", Action: actions, Resource: resources}
}

// Service is a service principal.
func Service(name string) map[string]string { return map[string]string{"Service": name} }

// AssumableBy is a role trust policy letting the service principal assume the role, with the actions given
// (sts:AssumeRole when none) and an optional condition.
func AssumableBy(principal string, condition map[string]map[string]any, actions ...string) Document {
	if len(actions) == 0 {
		actions = []string{"sts:AssumeRole"}
	}
	return New(Statement{Effect: "Allow", Principal: Service(principal), Action: actions, Condition: condition})
}

// DenyInsecureTransport denies every SQS request to the queue not made over TLS. It is a Deny, so its sqs:*
// grants nothing.
func DenyInsecureTransport(queueARN string) Statement {
	return Statement{
		Sid: "DenyInsecureTransport", Effect: "Deny", Principal: "*", Action: []string{"sqs:*"}, Resource: []string{queueARN},
		Condition: map[string]map[string]any{"Bool": {"aws:SecureTransport": "false"}},
	}
}

// JSON marshals d; documents are built from plain values, so marshalling cannot fail.
func (d Document) JSON() string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("marshalling a policy document: %v", err))
	}
	return string(b)
}

// RootOf is the root principal of the account an ARN is in (arn:<partition>:iam::<account>:root): the account,
// which always exists, as a policy's principal.
func RootOf(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		panic("policy: not an ARN: " + arn) // the program builds every ARN it passes
	}
	return "arn:" + parts[1] + ":iam::" + parts[4] + ":root"
}

// PrincipalIs admits principals named by ARN in a resource or trust policy without naming them as principals: the
// principal is the accounts of the roles or users (Principal must name something that exists when the policy is
// set, and a role named there is stored as its unique ID, so a role recreated later would lose access), and their
// ARNs are the aws:PrincipalArn condition.
func PrincipalIs(arns ...string) (principal any, condition map[string]map[string]any) {
	var roots []string
	for _, a := range arns {
		if r := RootOf(a); !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return map[string]any{"AWS": one(roots)}, map[string]map[string]any{"ArnEquals": {"aws:PrincipalArn": one(arns)}}
}

// one is a policy value of vs: a string when there is one, else the list.
func one(vs []string) any {
	if len(vs) == 1 {
		return vs[0]
	}
	return vs
}
