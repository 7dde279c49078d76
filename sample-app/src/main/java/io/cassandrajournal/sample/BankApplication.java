package io.cassandrajournal.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

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

}
