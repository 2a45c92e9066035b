package iam

import (
	"testing"
)

// evidenceRows: what the router keeps is sealed by the router alone and archived where nobody erases it.
//   - The seal key: the router may sign (kms:Sign) and read the public key; the redrive role, and an administrator of the
//     account allowed kms:* on *, may read the public key and may not sign: the key policy's explicit Deny, which the row
//     widened to AWS's default key policy (the account's root allowed kms:*), without the Deny, lets the administrator
//     sign: the row can fail. What the administrators keep: the key's administration (kms:PutKeyPolicy,
//     kms:ScheduleKeyDeletion), which docs/security.md says, with the service control policy that takes it.
//   - The archive: the router may write a record, conditionally (If-None-Match), and nothing else; a write over a record
//     is denied to it; an administrator allowed s3:* on * may not write, delete a record or a version, bypass governance
//     retention, change a record's retention, or set a lifecycle rule, and nobody may read it without TLS; each Deny
//     widened away lets the administrator do it; the redrive role may list and read the records, and write none.
func evidenceRows(t *testing.T, s *Stack) []row {
	t.Helper()
	if s.SealKey == nil || s.SealKey.ARN == "" || s.Archive == nil {
		t.Fatalf("stack %s: no seal key (%v) or archive (%v)", s.Name, s.SealKey, s.Archive)
	}
	k, a := s.SealKey, s.Archive
	router := s.session(s.Role(t, s.RouterRole))
	kmsAdmin, s3Admin := s.admin("kms:*"), s.admin("s3:*")
	onKey := func(name string, who caller, action string, want verdict) row {
		return row{name: s.Name + ": " + name, who: who, action: action, resource: k.ARN, resourceAcc: s.Account, resourcePolicy: k.Policy, want: want}
	}
	record := a.ARN + "/refused/2026/11/27/m.forged_sender.json"
	delivered := a.ARN + "/delivered/4f1c9a.json"
	onArchive := func(name string, who caller, action, resource string, want verdict) row {
		return row{name: s.Name + ": " + name, who: who, action: action, resource: resource, resourceAcc: s.Account, resourcePolicy: a.Policy, want: want}
	}
	conditional := func(c caller) caller { return c.with("s3:if-none-match", "*") }
	defaultKeyPolicy := Policy{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:" + s.Partition + ":iam::" + s.Account + ":root"}, "Action": "kms:*", "Resource": "*",
	}}}
	adminSigns := onKey("an administrator allowed kms:* on * signs with the seal key", kmsAdmin, "kms:Sign", explicitlyDenied)
	rows := []row{
		onKey("the router signs with the seal key", router, "kms:Sign", allowed),
		onKey("the router reads the seal key's public key", router, "kms:GetPublicKey", allowed),
		adminSigns,
		widened(adminSigns, "AWS's default key policy, without the Deny", func(w *row) { w.resourcePolicy = defaultKeyPolicy }),
		onKey("an administrator allowed kms:* on * reads the public key", kmsAdmin, "kms:GetPublicKey", allowed),
		onKey("an administrator allowed kms:* on * changes the key's policy", kmsAdmin, "kms:PutKeyPolicy", allowed),
		onKey("an administrator allowed kms:* on * schedules the key's deletion", kmsAdmin, "kms:ScheduleKeyDeletion", allowed),
		onKey("an administrator allowed kms:* on * grants another the key", kmsAdmin, "kms:CreateGrant", denied),

		onArchive("the router writes a record, conditionally", conditional(router), "s3:PutObject", record, allowed),
		onArchive("the router writes over a record (no If-None-Match)", router, "s3:PutObject", record, explicitlyDenied),
		onArchive("the router deletes a record", router, "s3:DeleteObject", record, denied),
		onArchive("the router reads a record", router, "s3:GetObject", record, denied),
		onArchive("the router writes outside the archive's prefixes", conditional(router), "s3:PutObject", a.ARN+"/elsewhere", denied),
		onArchive("the router records a delivery in the ledger, conditionally", conditional(router), "s3:PutObject", delivered, allowed),
		onArchive("the router records a delivery over another (no If-None-Match)", router, "s3:PutObject", delivered, explicitlyDenied),
		onArchive("the router reads the ledger back", router, "s3:GetObject", delivered, allowed),
		onArchive("an administrator allowed s3:* on * writes in the ledger", conditional(s3Admin), "s3:PutObject", delivered, explicitlyDenied),
		onArchive("an administrator allowed s3:* on * deletes a delivery", s3Admin, "s3:DeleteObject", delivered, explicitlyDenied),
	}
	for _, d := range []struct{ action, resource, sid string }{
		{"s3:PutObject", record, "OnlyTheRouterArchives"},
		{"s3:DeleteObject", record, "NobodyDeletes"},
		{"s3:DeleteObjectVersion", record, "NobodyDeletes"},
		{"s3:BypassGovernanceRetention", record, "NobodyDeletes"},
		{"s3:PutObjectRetention", record, "NobodyDeletes"},
		{"s3:PutLifecycleConfiguration", a.ARN, "NothingExpires"},
	} {
		who := s3Admin
		if d.action == "s3:PutObject" {
			who = conditional(who)
		}
		deny := onArchive("an administrator allowed s3:* on * "+d.action, who, d.action, d.resource, explicitlyDenied)
		rows = append(rows, deny, widened(deny, "the archive's policy without "+d.sid, func(w *row) {
			w.resourcePolicy = withoutStatements(a.Policy, d.sid)
		}))
	}
	rows = append(rows,
		onArchive("an administrator allowed s3:* on * reads a record without TLS", s3Admin.with("aws:SecureTransport", "false"), "s3:GetObject", record, explicitlyDenied),
		onArchive("an administrator allowed s3:* on * reads a record", s3Admin, "s3:GetObject", record, allowed),
	)
	if s.RedriveRole != "" {
		redrive := s.session(s.Role(t, s.RedriveRole))
		rows = append(rows,
			onKey("the redrive role signs with the seal key", redrive, "kms:Sign", explicitlyDenied),
			onKey("the redrive role reads the seal key's public key", redrive, "kms:GetPublicKey", allowed),
			onArchive("the redrive role lists the archive", redrive, "s3:ListBucket", a.ARN, allowed),
			onArchive("the redrive role reads a record", redrive, "s3:GetObject", record, allowed),
			onArchive("the redrive role writes a record", conditional(redrive), "s3:PutObject", record, explicitlyDenied),
			onArchive("the redrive role deletes a record", redrive, "s3:DeleteObject", record, explicitlyDenied),
		)
	}
	return rows
}

// withoutStatements is p without the statements whose Sid is among sids.
func withoutStatements(p Policy, sids ...string) Policy {
	out := copyPolicy(p)
	var keep []any
	for _, st := range statements(out) {
		sid, _ := st["Sid"].(string)
		drop := false
		for _, x := range sids {
			drop = drop || sid == x
		}
		if !drop {
			keep = append(keep, st)
		}
	}
	out["Statement"] = keep
	return out
}
