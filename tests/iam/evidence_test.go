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
//     is denied to it; it writes, reads back and lists by version its ledger (claims, deliveries), lists the bucket
//     (S3's 404 for a missing entry) and reads nothing else; an administrator allowed s3:* on * may not write, delete a
//     record, a version or a ledger entry, bypass governance retention, change a record's retention, or set a lifecycle
//     rule, and nobody may read it without TLS; each Deny widened away lets the administrator do it; the redrive role
//     may list and read the records, their versions (a version a delete marker hides) and the ledger, and write none.
//     Neither role may do any of it in a bucket of the archive's name that another account holds, whatever that
//     bucket's policy invites (s3:ResourceAccount; widened without it, they may).
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
	claim := a.ARN + "/claims/4f1c9a/000000.json"
	publicKey := a.ARN + "/keys/1234abcd-12ab-34cd-56ef-1234567890ab.pem"
	// S3 sets s3:ResourceAccount to the bucket's owner on every request.
	onArchive := func(name string, who caller, action, resource string, want verdict) row {
		return row{name: s.Name + ": " + name, who: who.with("s3:ResourceAccount", s.Account), action: action, resource: resource, resourceAcc: s.Account,
			resourcePolicy: a.Policy, want: want}
	}
	// A bucket of the archive's name that another account holds (S3's names are global), whose policy lets the bus's
	// roles do anything: the roles' own policies, conditioned on s3:ResourceAccount, refuse it; widened without that
	// condition, they let it in: the row can fail.
	const squatter = "999999999999"
	onForeign := func(name string, who caller, role *Role, action, resource string) []row {
		invite := Policy{"Version": "2012-10-17", "Statement": []any{map[string]any{
			"Effect": "Allow", "Principal": map[string]any{"AWS": role.ARN}, "Action": "s3:*", "Resource": []any{a.ARN, a.ARN + "/*"},
		}}}
		r := row{name: s.Name + ": " + name + " in a bucket of the archive's name that another account holds, inviting it", who: who.with("s3:ResourceAccount", squatter),
			action: action, resource: resource, resourceAcc: squatter, resourcePolicy: invite, want: denied}
		return []row{r, widened(r, "the role's policy without s3:ResourceAccount", func(w *row) {
			w.who.identity = nil
			for _, p := range role.Policies {
				w.who.identity = append(w.who.identity, withoutKey(p, "s3:ResourceAccount"))
			}
		})}
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
		onArchive("the router keeps the seal key's public key, conditionally", conditional(router), "s3:PutObject", publicKey, allowed),
		onArchive("the router records a delivery in the ledger, conditionally", conditional(router), "s3:PutObject", delivered, allowed),
		onArchive("the router records a delivery over another (no If-None-Match)", router, "s3:PutObject", delivered, explicitlyDenied),
		onArchive("the router reads the ledger back", router, "s3:GetObject", delivered, allowed),
		onArchive("the router claims a record in the ledger, conditionally", conditional(router), "s3:PutObject", claim, allowed),
		onArchive("the router claims a record over another claim (no If-None-Match)", router, "s3:PutObject", claim, explicitlyDenied),
		onArchive("the router reads a claim", router, "s3:GetObject", claim, allowed),
		onArchive("the router lists a record's claims by version", router.with("s3:prefix", "claims/4f1c9a/"), "s3:ListBucketVersions", a.ARN, allowed),
		onArchive("the router lists the records by version", router.with("s3:prefix", "refused/"), "s3:ListBucketVersions", a.ARN, denied),
		onArchive("the router lists every key by version", router, "s3:ListBucketVersions", a.ARN, denied),
		// S3 answers a GetObject of a missing ledger entry 404 only to a caller allowed s3:ListBucket: without it, 403.
		onArchive("the router lists the archive (a missing ledger entry is a 404)", router, "s3:ListBucket", a.ARN, allowed),
		onArchive("the router reads a version of a record", router, "s3:GetObjectVersion", record, denied),
		onArchive("the router reads a version of a delivery", router, "s3:GetObjectVersion", delivered, denied),
		onArchive("an administrator allowed s3:* on * writes in the ledger", conditional(s3Admin), "s3:PutObject", delivered, explicitlyDenied),
		onArchive("an administrator allowed s3:* on * deletes a delivery", s3Admin, "s3:DeleteObject", delivered, explicitlyDenied),
		onArchive("an administrator allowed s3:* on * hides a claim behind a delete marker", s3Admin, "s3:DeleteObject", claim, explicitlyDenied),
	}
	routerRole := s.Role(t, s.RouterRole)
	rows = append(rows, onForeign("the router writes a record", conditional(router), routerRole, "s3:PutObject", record)...)
	rows = append(rows, onForeign("the router reads a claim", router, routerRole, "s3:GetObject", claim)...)
	rows = append(rows, onForeign("the router lists a record's claims", router.with("s3:prefix", "claims/4f1c9a/"), routerRole, "s3:ListBucketVersions", a.ARN)...)
	rows = append(rows, onForeign("the router lists the bucket", router, routerRole, "s3:ListBucket", a.ARN)...)
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
			onArchive("the redrive role lists the records by version", redrive.with("s3:prefix", "refused/"), "s3:ListBucketVersions", a.ARN, allowed),
			onArchive("the redrive role lists the public keys by version", redrive.with("s3:prefix", "keys/"), "s3:ListBucketVersions", a.ARN, allowed),
			onArchive("the redrive role reads a record", redrive, "s3:GetObject", record, allowed),
			onArchive("the redrive role reads a record a delete marker hides (its version)", redrive, "s3:GetObjectVersion", record, allowed),
			onArchive("the redrive role reads a public key", redrive, "s3:GetObject", publicKey, allowed),
			onArchive("the redrive role reads a public key a delete marker hides (its version)", redrive, "s3:GetObjectVersion", publicKey, allowed),
			row{name: s.Name + ": the redrive role finds the archives (ListBuckets)", who: redrive, action: "s3:ListAllMyBuckets", resource: "*", want: allowed},
			onArchive("the redrive role reads the ledger", redrive, "s3:GetObject", delivered, allowed),
			onArchive("the redrive role writes a record", conditional(redrive), "s3:PutObject", record, explicitlyDenied),
			onArchive("the redrive role deletes a record", redrive, "s3:DeleteObject", record, explicitlyDenied),
		)
		redriveRole := s.Role(t, s.RedriveRole)
		rows = append(rows, onForeign("the redrive role reads a record", redrive, redriveRole, "s3:GetObject", record)...)
		rows = append(rows, onForeign("the redrive role reads a record's version", redrive, redriveRole, "s3:GetObjectVersion", record)...)
		rows = append(rows, onForeign("the redrive role lists the records by version", redrive.with("s3:prefix", "refused/"), redriveRole, "s3:ListBucketVersions", a.ARN)...)
		rows = append(rows, onForeign("the redrive role lists the bucket", redrive, redriveRole, "s3:ListBucket", a.ARN)...)
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
