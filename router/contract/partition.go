package contract

import "slices"

// Partitions are the AWS partitions, the second field of every ARN: the commercial one, China, AWS GovCloud (US),
// the European Sovereign Cloud and the isolated ones ("Identify AWS resources with Amazon Resource Names (ARNs)",
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html, names aws, aws-cn and aws-us-gov; the
// others are in the partition table every AWS SDK carries, partitions.json, which TestPartitionsAreTheSDKs reads
// from aws-sdk-go-v2).
var Partitions = []string{"aws", "aws-cn", "aws-eusc", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-us-gov"}

// IsPartition reports whether p is an AWS partition.
func IsPartition(p string) bool { return slices.Contains(Partitions, p) }

// PartitionOf is the partition of an ARN, "" when arn is not one in a known partition.
func PartitionOf(arn string) string {
	rest, ok := cutPrefix(arn, "arn:")
	if !ok {
		return ""
	}
	for i := range len(rest) {
		if rest[i] == ':' {
			if p := rest[:i]; IsPartition(p) {
				return p
			}
			return ""
		}
	}
	return ""
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, false
	}
	return s[len(prefix):], true
}
