package io.cassandrajournal.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * A bank-account service on the Cassandra journal. Run it with
 * {@code ./mvnw -pl sample-app -am spring-boot:run}: it starts an embedded Cassandra node when nothing
 * answers on 127.0.0.1:9042.
 */
@SpringBootApplication
public class BankApplication {

	public static void main(String[] args) {
		SpringApplication.run(BankApplication.class, args);
	}

	/**
	 * Tomcat refuses a URL with an encoded slash ({@code %2F}) itself, with an HTML page the application never
	 * sees. Passed through, it reaches the account API, which answers with a problem body like for every other
	 * invalid account id (ids may not contain slashes: see {@link AccountIds}).
	 * @return the customizer
	 */
	@Bean
	WebServerFactoryCustomizer<TomcatServletWebServerFactory> encodedSlashesReachTheApplication() {
		return (factory) -> factory
			.addConnectorCustomizers((connector) -> connector.setEncodedSolidusHandling("passthrough"));
	}

}
