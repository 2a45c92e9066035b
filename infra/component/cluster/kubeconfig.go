package cluster

import (
	"encoding/json"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// kubeconfig is the part of the kubeconfig format the provider needs.
type kubeconfig struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	CurrentContext string         `json:"current-context"`
	Clusters       []namedCluster `json:"clusters"`
	Contexts       []namedContext `json:"contexts"`
	Users          []namedUser    `json:"users"`
}

type namedCluster struct {
	Name    string `json:"name"`
	Cluster struct {
		Server                   string `json:"server"`
		CertificateAuthorityData string `json:"certificate-authority-data"`
	} `json:"cluster"`
}

type namedContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster string `json:"cluster"`
		User    string `json:"user"`
	} `json:"context"`
}

type namedUser struct {
	Name string `json:"name"`
	User struct {
		Exec execConfig `json:"exec"`
	} `json:"user"`
}

type execConfig struct {
	APIVersion      string   `json:"apiVersion"`
	Command         string   `json:"command"`
	Args            []string `json:"args"`
	InteractiveMode string   `json:"interactiveMode"`
}

// Kubeconfig is a kubeconfig for cluster whose credentials come from `aws eks get-token`, so no token is stored
// in the state and the identity running `pulumi up` is the one Kubernetes sees.
// With roleARN (a member account's deploy role), the token is that role's: the cluster is another account's.
func Kubeconfig(cluster, region, roleARN string, endpoint, caData pulumi.StringOutput) pulumi.StringOutput {
	return pulumi.All(endpoint, caData).ApplyT(func(v []any) (string, error) {
		k := kubeconfig{APIVersion: "v1", Kind: "Config", CurrentContext: cluster}
		var c namedCluster
		c.Name = cluster
		c.Cluster.Server = v[0].(string)
		c.Cluster.CertificateAuthorityData = v[1].(string)
		var ctx namedContext
		ctx.Name, ctx.Context.Cluster, ctx.Context.User = cluster, cluster, cluster
		var u namedUser
		u.Name = cluster
		u.User.Exec = execConfig{
			APIVersion: "client.authentication.k8s.io/v1beta1", Command: "aws", InteractiveMode: "Never",
			Args: []string{"eks", "get-token", "--cluster-name", cluster, "--region", region, "--output", "json"},
		}
		if roleARN != "" {
			u.User.Exec.Args = append(u.User.Exec.Args, "--role-arn", roleARN)
		}
		k.Clusters, k.Contexts, k.Users = []namedCluster{c}, []namedContext{ctx}, []namedUser{u}
		b, err := json.Marshal(k)
		return string(b), err
	}).(pulumi.StringOutput)
}
