package components

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
)

// standInOf is the stand-in of an argument unknown at a preview, by the argument (argumentOf) and in the account
// whose resources it names: a value of the argument's form holding mark, so that the checks of its form pass and
// what is made from it holds the mark. False for an argument no stand-in can take the place of: one that decides
// which resources are declared (heartbeatRate: none when empty), or a number or version that cannot hold a mark.
func standInOf(arg, mark, account string, env awsenv.Env) (string, bool) {
	if mark == "" {
		return "", false
	}
	switch arg {
	case "namePrefix", "busName", "clusterName", "controllerRoleName", "karpenter.namespace", "karpenter.serviceAccount", "karpenter.values",
		"tags", "router.ownerTagKeys":
		return mark, true
	case "hubAccountId":
		return mark, true // the digits' mark (markOf)
	case "create.vpcId":
		return "vpc-" + mark, true // the hexadecimal mark (markOf)
	case "heartbeatAlarmActions", "alarms.topicArn", "accounts.alarmTopicArn":
		return "arn:" + env.Partition + ":sns:" + env.Region + ":" + account + ":" + mark, true
	case "oidcProviderArn":
		return "arn:" + env.Partition + ":iam::" + account + ":oidc-provider/oidc.eks." + env.Region + ".amazonaws.com/id/" + mark, true
	case "redrive.principals", "accounts.deployRoleArn":
		return "arn:" + env.Partition + ":iam::" + account + ":role/" + mark, true
	case "organization.id":
		return "o-" + mark, true
	case "organization.memberOUs":
		return "ou-" + mark + "-" + mark, true
	}
	return "", false
}

// markOf is the mark the stand-in of arg holds, of m (the nth unknown input's marks): of a list or map wholly unknown
// when whole; "" when no stand-in can hold one.
func markOf(arg string, m standin.Marks, whole bool) string {
	switch {
	case whole && (arg == "hubAccountId" || arg == "create.vpcId"):
		return ""
	case arg == "hubAccountId":
		return m.Digits
	case arg == "create.vpcId":
		return m.Hex
	case whole:
		return m.Whole
	}
	return m.Text
}

// standIns puts, in args (a pointer to a component's arguments), a stand-in (standInOf) at each path of unknown,
// whose values the resolver left zero; it returns the paths no stand-in can take (nil when every one was put).
func standIns(args any, unknown []argPath, marks standin.Marks, env awsenv.Env) []string {
	var left []string
	for i, at := range unknown {
		marks := marks.Nth(i)
		name := pathText(at)
		account := env.Account
		if len(at) > 1 && at[0] == "accounts" {
			account, _ = at[1].(string) // a member's: accounts.<id>.…
		}
		put := func(arg string, whole bool) (string, bool) {
			if whole && (arg == "redrive.principals" || arg == "organization.memberOUs") {
				return "", false // whether the list is empty decides resources (the redrive role, the StackSet)
			}
			return standInOf(arg, markOf(arg, marks, whole), account, env)
		}
		if !setAt(reflect.ValueOf(args).Elem(), "", at, put) {
			left = append(left, name)
		}
	}
	return left
}

// pathText is the path's text, as the resolver names it: a.b[0].c.
func pathText(at argPath) string {
	var b strings.Builder
	for i, step := range at {
		switch s := step.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(s) + "]")
		case string:
			if i > 0 {
				b.WriteString(".")
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// setAt sets the value at steps under v, of the argument arg (its fields' names, without map keys or indexes),
// to the stand-in put gives: a string, or, for a list or a map wholly unknown, a list of one stand-in or a map
// keyed by one (put(arg, true)); false when put has none.
func setAt(v reflect.Value, arg string, steps argPath, put func(arg string, whole bool) (string, bool)) bool {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if len(steps) == 0 {
		switch v.Kind() {
		case reflect.String:
			s, ok := put(arg, false)
			if ok {
				v.SetString(s)
			}
			return ok
		case reflect.Interface: // within an argument of any value
			s, ok := put(arg, false)
			if ok {
				v.Set(reflect.ValueOf(s))
			}
			return ok
		case reflect.Slice:
			s, ok := put(arg, true)
			if ok && v.Type().Elem().Kind() == reflect.String {
				v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.ValueOf(s).Convert(v.Type().Elem())))
				return true
			}
			return false
		case reflect.Map:
			s, ok := put(arg, true)
			if !ok || v.Type().Key().Kind() != reflect.String {
				return false
			}
			m := reflect.MakeMap(v.Type())
			elem := reflect.ValueOf(s)
			if !elem.Type().AssignableTo(v.Type().Elem()) {
				return false
			}
			m.SetMapIndex(reflect.ValueOf(s).Convert(v.Type().Key()), elem)
			v.Set(m)
			return true
		}
		return false
	}
	switch step := steps[0].(type) {
	case int:
		if v.Kind() == reflect.Interface {
			v = v.Elem()
		}
		if v.Kind() != reflect.Slice || step >= v.Len() {
			return false
		}
		return setAt(v.Index(step), arg, steps[1:], put) // a slice's elements are addressable
	case string:
		if v.Kind() == reflect.Interface {
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if argName(v.Type().Field(i)) == step {
					return setAt(v.Field(i), strings.TrimPrefix(arg+"."+step, "."), steps[1:], put)
				}
			}
		case reflect.Map:
			key := reflect.ValueOf(step).Convert(v.Type().Key())
			elem := reflect.New(v.Type().Elem()).Elem()
			if e := v.MapIndex(key); e.IsValid() {
				elem.Set(e)
			}
			if !setAt(elem, arg, steps[1:], put) {
				return false
			}
			v.SetMapIndex(key, elem)
			return true
		}
	}
	return false
}
