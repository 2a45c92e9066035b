module github.com/karpenter-interruption-bus/karpenter-interruption-bus

go 1.26

replace github.com/karpenter-interruption-bus/karpenter-interruption-bus/router => ./router
