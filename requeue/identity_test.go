package requeue

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
)

// principal is a principal of redrive.principals: GetCallerIdentity names it, and STS lets it assume the redrive role
// only with a source identity, as the role's trust does (the IAM matrix judges the trust); it records what it was asked.
type principal struct {
	arn     string
	refuse  bool
	assumed []*sts.AssumeRoleInput
}

func (p *principal) GetCallerIdentity(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error) {
	return &sts.GetCallerIdentityOutput{Arn: aws.String(p.arn), UserId: aws.String("AIDAPRINCIPAL"), Account: aws.String("111111111111")}, nil
}

func (p *principal) AssumeRole(_ context.Context, in *sts.AssumeRoleInput, _ ...func(*sts.Options)) (*sts.AssumeRoleOutput, error) {
	p.assumed = append(p.assumed, in)
	if p.refuse || aws.ToString(in.SourceIdentity) == "" {
		return nil, errors.New("AccessDenied: not authorized to perform sts:AssumeRole")
	}
	session := aws.ToString(in.RoleSessionName)
	return &sts.AssumeRoleOutput{
		Credentials: &ststypes.Credentials{AccessKeyId: aws.String("ASIA" + session), SecretAccessKey: aws.String("s"), SessionToken: aws.String("t")},
		AssumedRoleUser: &ststypes.AssumedRoleUser{Arn: aws.String("arn:aws:sts::111111111111:assumed-role/kib-prod-redrive-eu-west-1/" + session),
			AssumedRoleId: aws.String(redriveID + ":" + session)},
	}, nil
}

// TestAPrincipalOpensTheRedriveRolesSessionWithItsName: run by a principal of redrive.principals, the command assumes
// the redrive role with the principal's name as the session's source identity and name, and goes on with the clients
// of that session; the vouch it writes names the session. Refused, it says who may not assume which role.
func TestAPrincipalOpensTheRedriveRolesSessionWithItsName(t *testing.T) {
	p := &principal{arn: "arn:aws:sts::111111111111:assumed-role/AWSReservedSSO_Oncall_0123/alice@example.com"}
	q := newSQS(quarantine, kept("m1", "unattributable_sender", "AROAC:s", "1", "ev-1"))
	var got string
	c := Clients{SQS: newSQS(quarantine), STS: p, As: func(creds aws.CredentialsProvider) Clients {
		v, _ := creds.Retrieve(context.Background())
		got = v.AccessKeyID
		return Clients{SQS: q, STS: p}
	}}
	var w bytes.Buffer
	rep, err := Run(context.Background(), c, stackOuts, Options{From: Quarantine, Send: true, Vouch: true, EventIDs: []string{"ev-1"}}, &w)
	if err != nil || rep.Sent != 1 {
		t.Fatalf("sent %d, %v:\n%s", rep.Sent, err, w.String())
	}
	if len(p.assumed) != 1 || aws.ToString(p.assumed[0].SourceIdentity) != "alice@example.com" || aws.ToString(p.assumed[0].RoleSessionName) != "alice@example.com" ||
		aws.ToString(p.assumed[0].RoleArn) != redriveARN || got != "ASIAalice@example.com" {
		t.Errorf("assumed %+v with the session's keys %q; want the redrive role, alice's name as source identity and session", p.assumed, got)
	}
	if by := aws.ToString(q.sent[0].MessageAttributes["kib-vouched-by"].StringValue); !strings.HasSuffix(by, ":assumed-role/kib-prod-redrive-eu-west-1/alice@example.com") {
		t.Errorf("the vouch names %q, want the session", by)
	}
	p.refuse = true
	if _, err := Run(context.Background(), c, stackOuts, Options{From: Quarantine}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "may not assume the redrive role "+redriveARN) {
		t.Errorf("refused: %v, want it said", err)
	}
}

func TestSourceIdentity(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:sts::111111111111:assumed-role/Oncall/alice@example.com":          "alice@example.com",
		"arn:aws:iam::111111111111:user/ops/bob":                                   "bob",
		"arn:aws:iam::111111111111:root":                                           "root",
		"arn:aws:sts::111111111111:assumed-role/Oncall/a b/cd":                     "cd",
		"arn:aws:sts::111111111111:assumed-role/Oncall/" + strings.Repeat("x", 70): strings.Repeat("x", 64),
		"arn:aws:sts::111111111111:assumed-role/Oncall/x":                          "",
		"arn:aws:sts::111111111111:assumed-role/Oncall/ü!":                         "--",
	} {
		if got := SourceIdentity(arn); got != want {
			t.Errorf("SourceIdentity(%s) = %q, want %q", arn, got, want)
		}
	}
}
