// Package queryproto writes the answers of AWS's query protocol (the XML of STS and IAM) for the stubs that speak
// it: a result document, or an ErrorResponse with its code, as the AWS SDK reads them.
package queryproto

import (
	"encoding/xml"
	"fmt"
	"net/http"
)

// WriteResult writes v, an XML document, as a query protocol's answer.
func WriteResult(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(v)
}

// WriteError writes an ErrorResponse of the service whose XML namespace is xmlns, with status, code and msg.
func WriteError(w http.ResponseWriter, xmlns string, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<ErrorResponse xmlns="%s"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>stub</RequestId></ErrorResponse>`, xmlns, code, msg)
}
