package contract

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPartitionsAreTheSDKs: Partitions are the partitions of the table the AWS SDK for Go v2 this module pins
// resolves endpoints with (internal/endpoints/awsrulesfn/partitions.json, generated from AWS's own), no more, no
// fewer: a partition AWS adds shows here when the SDK is bumped.
func TestPartitionsAreTheSDKs(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-sdk-go-v2").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/aws/aws-sdk-go-v2: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "internal", "endpoints", "awsrulesfn", "partitions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Partitions []struct {
			ID string `json:"id"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	var sdk []string
	for _, p := range table.Partitions {
		sdk = append(sdk, p.ID)
	}
	slices.Sort(sdk)
	if got := slices.Sorted(slices.Values(Partitions)); !slices.Equal(got, sdk) {
		t.Errorf("Partitions = %v, the SDK's table has %v", got, sdk)
	}
}

func TestPartitionOf(t *testing.T) {
	for _, tt := range []struct{ arn, want string }{
		{"arn:aws:iam::123456789012:role/r", "aws"},
		{"arn:aws-cn:iam::123456789012:role/r", "aws-cn"},
		{"arn:aws-us-gov:sns:us-gov-west-1:123456789012:t", "aws-us-gov"},
		{"arn:aws-iso-b:iam::123456789012:role/r", "aws-iso-b"}, // more than one hyphen
		{"arn:aws-iso-f:iam::123456789012:role/r", "aws-iso-f"},
		{"arn:aws-eusc:iam::123456789012:role/r", "aws-eusc"},
		{"arn:awsx:iam::123456789012:role/r", ""},
		{"arn:aws-moon:iam::123456789012:role/r", ""},
		{"arn:AWS:iam::123456789012:role/r", ""},
		{"arn::iam::123456789012:role/r", ""},
		{"aws:iam::123456789012:role/r", ""},
		{"arn:aws", ""},
	} {
		if got := PartitionOf(tt.arn); got != tt.want {
			t.Errorf("PartitionOf(%q) = %q, want %q", tt.arn, got, tt.want)
		}
	}
}
