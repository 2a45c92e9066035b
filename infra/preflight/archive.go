package preflight

import (
	"context"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/bucketowner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
)

// checkArchive asks S3, as the identity the stack's AWS provider uses, who owns the archive's bucket: the one the last
// update's outputs name (the stack's state holds it), or the one of the archive's name (bus.ArchiveBucketName). A
// bucket another account holds is refused before anything is declared, naming it and why: bucket names are global to
// S3, and the provider's own lookup finds another account's bucket that lets it in as readily as the account's. What
// is adopted later (Flight.ArchiveAdoption) is the account's own bucket alone, never over an archive in state.
func (f *Flight) checkArchive(ctx *pulumi.Context,
	read func(ctx context.Context, region string, id concurrency.Identity, bucket, account string) (bucketowner.Answer, error),
) error {
	env := f.Env
	f.ArchiveBucket = bus.ArchiveBucketName(f.Config.NamePrefix, env.Account, env.Region)
	if name := f.Previous.ArchiveBucket; name != "" {
		f.ArchiveBucket, f.ArchiveInState = name, true
	}
	if f.unknowns.waits(ctx.DryRun(), f.ArchiveBucket, true) {
		// Its name is unknown at this preview: nothing is looked up by it (the preview plans a bucket); the update
		// asks S3.
		f.Archive = bucketowner.Missing
		return nil
	}
	bucketARN := "arn:" + env.Partition + ":s3:::" + f.ArchiveBucket
	id, err := providerIdentity(ctx)
	if err != nil {
		return err
	}
	if len(id.Unfollowed) > 0 {
		_ = ctx.Log.Warn(fmt.Sprintf("archive: who owns bucket %s is not checked before anything is declared: the stack's AWS provider is "+
			"configured with %s, which the check does not follow (docs/deploying.md, \"Permissions\"). A bucket of that name the provider "+
			"finds is adopted as the archive whoever owns it: make sure it is account %s's", f.ArchiveBucket, strings.Join(id.Unfollowed, ", "), env.Account), nil)
		return nil
	}
	answer, err := read(ctx.Context(), env.Region, id, f.ArchiveBucket, env.Account)
	if err != nil {
		return fmt.Errorf("archive: asking S3 who owns bucket %s failed: %w. Fix: let the identity that runs pulumi (%s) call s3:ListBucket on %s "+
			"(docs/deploying.md, \"Permissions\")", f.ArchiveBucket, err, id, bucketARN)
	}
	f.Archive = answer
	var why string
	switch answer {
	case bucketowner.Foreign:
		why = fmt.Sprintf("S3 refuses it as account %s's (ExpectedBucketOwner) and answers it as another's", env.Account)
	case bucketowner.Refused:
		why = fmt.Sprintf("S3 refuses it both as account %s's (ExpectedBucketOwner) and as anyone's: it is another account's, or the identity "+
			"that runs pulumi (%s) may not list it (s3:ListBucket on %s), which deploying the archive needs", env.Account, id, bucketARN)
	case bucketowner.ElsewhereRegion:
		why = fmt.Sprintf("S3 answers it as a bucket of another region than the stack's %s", env.Region)
	default:
		return nil
	}
	what := "the name of the bus's archive (its name prefix, account and region)"
	if f.ArchiveInState {
		what = "the archive the stack's last update had"
	}
	return fmt.Errorf("archive: bucket %s, %s, is not account %s's: %s. Nothing was declared: the bus keeps its evidence only in a bucket "+
		"of its own account. Fix: find out who holds the bucket (S3's names are global to every account); set namePrefix to a name whose "+
		"archive no other account holds (docs/security.md, \"The archive\")", f.ArchiveBucket, what, env.Account, why)
}

// ArchiveAdoption is whether the bus adopts a bucket of the archive's name: never when the last update had an archive
// (its state holds it: an import over another ID in state would replace it); the bucket S3 answered as the account's
// own; nothing when there is none; and, when nothing asked S3, what the provider's lookup finds.
func (f Flight) ArchiveAdoption() bus.Adoption {
	switch {
	case f.ArchiveInState, f.Archive == bucketowner.Missing:
		return bus.AdoptNothing
	case f.Archive.Adoptable():
		return bus.AdoptOwned
	}
	return bus.AdoptIfFound
}
