package components

import "github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"

// SetMarks makes every preview's marks m until the returned function restores the drawing.
func SetMarks(m standin.Marks) (restore func()) {
	was := newMarks
	newMarks = func() standin.Marks { return m }
	return func() { newMarks = was }
}
