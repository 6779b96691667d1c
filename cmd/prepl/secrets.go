package main

import (
	"flag"
	"strings"

	prun "github.com/prepl/prepl/run"
)

// registerEndpoint registers one endpoint's flags besides its URL (--ROLE-*).
func registerEndpoint(fs *flag.FlagSet, e *prun.EndpointSecrets, role string) {
	e.Role = role
	fs.StringVar(&e.PasswordFile, role+"-password-file", "", "file whose first line is the "+role+"'s password; read again at every reconnect,\n"+
		"so a rotated secret is picked up (also: env PREPL_"+strings.ToUpper(role)+"_PASSWORD; MYSQL_PWD last)")
	fs.StringVar(&e.DefaultsFile, role+"-defaults-file", "", "mysql option file for the "+role+" only; its [client] section wins over --defaults-file")
	fs.StringVar(&e.SSLMode, role+"-ssl-mode", "", "TLS to the "+role+", as the mysql client's --ssl-mode: DISABLED, PREFERRED (default: TLS if the server\n"+
		"offers it), REQUIRED, VERIFY_CA, VERIFY_IDENTITY (default VERIFY_CA when --"+role+"-ssl-ca is given)")
	fs.StringVar(&e.SSLCA, role+"-ssl-ca", "", "PEM file of the CA that signed the "+role+"'s certificate")
	fs.StringVar(&e.SSLCert, role+"-ssl-cert", "", "PEM file of prepl's client certificate for the "+role)
	fs.StringVar(&e.SSLKey, role+"-ssl-key", "", "PEM file of the private key of --"+role+"-ssl-cert")
}

// registerSecrets registers the flags about secrets every applying command
// shares (how they are used: prun.Secrets).
func registerSecrets(fs *flag.FlagSet, s *prun.Secrets) {
	fs.StringVar(&s.DefaultsFile, "defaults-file", "", "mysql option file (my.cnf format) whose [client] section gives user, password, host, port, socket\n"+
		"and ssl-* to the source and the target where their URLs do not")
	fs.BoolVar(&s.Strict, "strict-permissions", false, "refuse a config, option or password file holding a password that group or others may read\n"+
		"(default: a warning)")
	registerEndpoint(fs, &s.Target, "target")
	s.ConfigPath = func() string {
		if f := fs.Lookup("config"); f != nil {
			return f.Value.String()
		}
		return ""
	}
}
