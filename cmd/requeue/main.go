// Command requeue lists the messages of a bus's quarantine (or dead-letter) queue, with why each is there, and sends
// the selected ones back to the central queue as the bus's redrive role: run by a principal of redrive.principals, it
// opens the role's session itself, with the principal's name as its source identity (docs/operations.md, "Refused
// messages: the quarantine"). Each carries its first sender, which the router judges
// it by; proven forgeries are never sent, unattributable messages only when vouched for by name. It reads the
// stack's outputs on stdin:
//
//	make requeue STACK=prod                                       # list the quarantine
//	make requeue STACK=prod REASON=unknown_account SEND=1         # send those back; the router judges each
//	make requeue STACK=prod EVENT=<id> VOUCH=1 SEND=1             # vouch for an unattributable event, and send it
//	make requeue STACK=prod FROM=dlq SEND=1                       # the router seals the dead-letter queue into the quarantine
//	make requeue STACK=prod REASON=dead_lettered SEND=1           # then send those back
//	make requeue STACK=prod FROM=archive SINCE=2026-11-01         # the archive's records, each seal checked
//
// AWS credentials and endpoints come from the environment, as for the AWS CLI; the region is the stack's.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/requeue"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

func main() {
	from := flag.String("from", requeue.Quarantine, "what to read: quarantine, dlq or archive")
	since := flag.String("since", "", "the archive only: records of messages sent that day (yyyy-mm-dd) or later")
	reasons := flag.String("reason", "", "only messages refused for these reasons, comma-separated (unknown_account, unattributable_sender, ...)")
	accounts := flag.String("account", "", "only events naming these accounts, comma-separated")
	events := flag.String("event", "", "only these event ids, comma-separated")
	senders := flag.String("sender", "", "only messages first sent by these SenderIds, comma-separated")
	vouch := flag.Bool("vouch", false, "vouch for the events of -event and the senders of -sender: their unattributable messages are sent too")
	send := flag.Bool("send", false, "send the selected messages back to the central queue (as the redrive role)")
	flag.Parse()
	opts := requeue.Options{From: *from, Reasons: split(*reasons), Accounts: split(*accounts), EventIDs: split(*events), Senders: split(*senders),
		Vouch: *vouch, Send: *send}
	if *since != "" {
		day, err := time.Parse(time.DateOnly, *since)
		if err != nil {
			fmt.Fprintln(os.Stderr, "requeue: -since:", err)
			os.Exit(2)
		}
		opts.Since = day
	}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "requeue:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func run(opts requeue.Options) error {
	ctx := context.Background()
	out, err := requeue.ReadOutputs(os.Stdin)
	if err != nil {
		return err
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(out.Region), config.WithAPIOptions(sdkbody.APIOptions))
	if err != nil {
		return fmt.Errorf("loading AWS configuration: %w", err)
	}
	_, err = requeue.Run(ctx, clientsOf(cfg, out), out, opts, os.Stdout)
	return err
}

// clientsOf are the command's clients of cfg; As makes them again with another identity's credentials (the redrive
// role's session the command opens).
func clientsOf(cfg aws.Config, out requeue.Outputs) requeue.Clients {
	c := requeue.Clients{SQS: sqs.NewFromConfig(cfg), STS: sts.NewFromConfig(cfg), S3: s3.NewFromConfig(cfg)}
	if out.SealKeyARN != "" {
		c.Seals = sealing.New(kms.NewFromConfig(cfg), out.SealKeyARN)
	}
	c.As = func(creds aws.CredentialsProvider) requeue.Clients {
		as := cfg.Copy()
		as.Credentials = aws.NewCredentialsCache(creds)
		return clientsOf(as, out)
	}
	return c
}
