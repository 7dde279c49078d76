package io.cassandrajournal.spring.boot.it;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.spring.boot.autoconfigure.CassandraJournalAutoConfiguration;
import io.cassandrajournal.spring.boot.autoconfigure.CassandraJournalOptionsCustomizer;
import io.cassandrajournal.spring.boot.projection.TestEvents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A node with client encryption and {@code PasswordAuthenticator} on, its certificates made by this test with the
 * JDK's keytool (a CA of its own, a node certificate for 127.0.0.1/localhost, and one issued for another host).
 * The journal's own session must check host names (the driver's {@code withSslContext} does not), refuse wrong
 * credentials at start-up with a report naming the properties, and never show the password.
 */
@ExtendWith(OutputCaptureExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SecureConnectionIT {

	private static final String STORE_PASSWORD = "store-pass-1";

	private static final String USER = "ledger_svc_login";

	private static final String PASSWORD = "Sup3r-Secret-Pa55-zq";

	@TempDir
	static Path keys;

	private static CassandraNode node;

	private static Path nodeKeystore;

	@BeforeAll
	static void startSecureNode() throws Exception {
		keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=Journal Test CA",
				"-ext", "bc:c", "-validity", "3", "-keystore", keys.resolve("ca.jks").toString());
		keytool("-exportcert", "-alias", "ca", "-rfc", "-file", keys.resolve("ca.pem").toString(), "-keystore",
				keys.resolve("ca.jks").toString());
		keytool("-importcert", "-noprompt", "-alias", "ca", "-file", keys.resolve("ca.pem").toString(), "-keystore",
				keys.resolve("trust.jks").toString());
		issue("right", "SAN=ip:127.0.0.1,dns:localhost");
		issue("wrong", "SAN=dns:cassandra.elsewhere.invalid");
		nodeKeystore = keys.resolve("node.jks");
		Files.copy(keys.resolve("right.jks"), nodeKeystore);
		node = CassandraNode.builder().maxHeap("512m").passwordAuthentication(true)
			.clientEncryption(nodeKeystore, STORE_PASSWORD).build();
		node.start();
		try (CqlSession admin = CqlSession.builder().addContactPoint(node.contactPoint())
			.withLocalDatacenter(node.datacenter())
			.withAuthCredentials("cassandra", "cassandra")
			.withSslContext(trust())
			.build()) {
			admin.execute("CREATE KEYSPACE IF NOT EXISTS secure_ks WITH replication = "
					+ "{'class': 'SimpleStrategy', 'replication_factor': 1}");
			// Its own keyspace for the application with a tag index: the journal records a keyspace's layout on the
			// first start and refuses an instance with another one.
			admin.execute("CREATE KEYSPACE IF NOT EXISTS secure_tagged WITH replication = "
					+ "{'class': 'SimpleStrategy', 'replication_factor': 1}");
			admin.execute("CREATE ROLE IF NOT EXISTS " + USER + " WITH PASSWORD = '" + PASSWORD + "' AND LOGIN = true");
		}
	}

	@AfterAll
	static void stopNode() {
		if (node != null) {
			node.close();
		}
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(CassandraJournalAutoConfiguration.class))
			.withBean(CassandraJournalOptionsCustomizer.class, () -> SecureConnectionIT::trustTestCa)
			.withPropertyValues("journal.cassandra.contact-points=127.0.0.1:" + node.nativePort(),
					"journal.cassandra.local-datacenter=" + node.datacenter(), "journal.cassandra.keyspace=secure_ks",
					"journal.cassandra.ssl=true", "journal.cassandra.username=" + USER,
					"journal.cassandra.password=" + PASSWORD, "journal.cassandra.startup-wait=0s");
	}

	@Test
	@Order(1)
	void theRightCertificateAndCredentialsConnect(CapturedOutput output) {
		runner().run((context) -> {
			assertThat(context).hasNotFailed();
			context.getBean(Journal.class)
				.append("secure-1", 0, List.of(EventToAppend.of(new TestEvents.Deposited(1), "t")))
				.toCompletableFuture()
				.get(30, TimeUnit.SECONDS);
			assertThat(context.getBean(io.cassandrajournal.CassandraJournalOptions.class).toString())
				.doesNotContain(PASSWORD);
		});
		assertThat(output.getAll()).as("the password never reaches the log").doesNotContain(PASSWORD);
	}

	@Test
	@Order(2)
	void noCredentialAppearsInHealthDetailsTheProjectionsEndpointOrTheConfigurationEndpoints(CapturedOutput output)
			throws Exception {
		SpringApplication application = new SpringApplication(StarterTestApplication.class, TrustTheTestCa.class);
		try (ConfigurableApplicationContext context = application.run("--server.port=0",
				"--server.address=127.0.0.1",
				"--spring.autoconfigure.exclude=org.springframework.boot.cassandra.autoconfigure.CassandraAutoConfiguration,"
						+ "org.springframework.boot.cassandra.autoconfigure.health.CassandraHealthContributorAutoConfiguration,"
						+ "org.springframework.boot.cassandra.autoconfigure.health.CassandraReactiveHealthContributorAutoConfiguration",
				"--management.endpoints.web.exposure.include=health,projections,configprops,env,metrics,prometheus",
				"--management.endpoint.health.show-details=always", "--management.endpoint.configprops.show-values=always",
				"--management.endpoint.env.show-values=always",
				"--journal.cassandra.contact-points=127.0.0.1:" + node.nativePort(),
				"--journal.cassandra.local-datacenter=" + node.datacenter(), "--journal.cassandra.keyspace=secure_tagged",
				"--journal.cassandra.use-tag-index=true", "--journal.cassandra.ssl=true",
				"--journal.cassandra.username=" + USER, "--journal.cassandra.password=" + PASSWORD,
				"--journal.cassandra.startup-wait=0s")) {
			Journal journal = context.getBean(Journal.class);
			journal.append("starter-acct-1", 0, List.of(EventToAppend.of(new TestEvents.Deposited(5), "starter")))
				.toCompletableFuture()
				.get(30, TimeUnit.SECONDS);
			String port = context.getEnvironment().getProperty("local.server.port");
			HttpClient http = HttpClient.newHttpClient();
			Map<String, String> bodies = new LinkedHashMap<>();
			for (String path : List.of("/actuator/health", "/actuator/health/journal", "/actuator/health/projections",
					"/actuator/projections", "/actuator/projections/by-tag", "/actuator/projections/by-pid",
					"/actuator/prometheus", "/actuator/configprops", "/actuator/env")) {
				HttpResponse<String> response = http.send(
						HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
						HttpResponse.BodyHandlers.ofString());
				assertThat(response.statusCode()).as(path).isEqualTo(200);
				bodies.put(path, response.body());
			}
			assertThat(bodies.get("/actuator/health")).as("details are really shown").contains("journal", "projections");
			assertThat(bodies.get("/actuator/projections")).contains("by-tag", "by-pid");
			assertThat(bodies.get("/actuator/configprops")).as("the properties are really listed")
				.contains("journal.cassandra", USER);
			bodies.forEach((path, body) -> assertThat(body).as(path).doesNotContain(PASSWORD));
			for (String path : List.of("/actuator/health", "/actuator/projections", "/actuator/prometheus")) {
				assertThat(bodies.get(path)).as(path).doesNotContain(USER);
			}
		}
		assertThat(output.getAll()).as("the password never reaches the log").doesNotContain(PASSWORD);
	}

	@Configuration(proxyBeanMethods = false)
	static class TrustTheTestCa {

		@Bean
		CassandraJournalOptionsCustomizer trustTheTestCa() {
			return SecureConnectionIT::trustTestCa;
		}

	}

	@Test
	@Order(3)
	void wrongCredentialsFailStartUpAtOnceWithAReportThatNamesTheProperties(CapturedOutput output) {
		SpringApplication application = new SpringApplication(SecureApp.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		long started = System.nanoTime();
		assertThatException().isThrownBy(() -> application.run(
				"--journal.cassandra.contact-points=127.0.0.1:" + node.nativePort(),
				"--journal.cassandra.local-datacenter=" + node.datacenter(), "--journal.cassandra.keyspace=secure_ks",
				"--journal.cassandra.ssl=true", "--journal.cassandra.username=" + USER,
				"--journal.cassandra.password=wrong-" + PASSWORD, "--journal.cassandra.startup-wait=60s"));
		assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started))
			.as("refused credentials are not retried for the start-up wait").isLessThan(30);
		assertThat(output.getAll()).contains("APPLICATION FAILED TO START")
			.contains("journal.cassandra.username")
			.contains("journal.cassandra.password")
			.doesNotContain(PASSWORD);
	}

	@Test
	@Order(4)
	void aCertificateIssuedForAnotherHostIsRefusedUnlessHostNameChecksAreTurnedOff(CapturedOutput output)
			throws Exception {
		Files.copy(keys.resolve("wrong.jks"), nodeKeystore, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
		node.restart();
		runner().run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootCauses(context.getStartupFailure())).as("a clear start-up error naming the mismatch")
				.anyMatch((message) -> message.contains("No subject alternative")
						|| message.contains("does not match") || message.contains("subject alternative"));
		});
		runner().withPropertyValues("journal.cassandra.ssl-hostname-validation=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(Journal.class).highestSequenceNr("secure-1").toCompletableFuture().get(30,
					TimeUnit.SECONDS)).isEqualTo(1);
		});
		assertThat(output.getAll()).doesNotContain(PASSWORD);
	}

	private static List<String> rootCauses(Throwable failure) {
		List<String> messages = new ArrayList<>();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			messages.add(String.valueOf(t.getMessage()));
			if (t instanceof com.datastax.oss.driver.api.core.AllNodesFailedException all) {
				all.getAllErrors().values().forEach((errors) -> errors.forEach((error) -> {
					for (Throwable e = error; e != null; e = e.getCause()) {
						messages.add(String.valueOf(e.getMessage()));
					}
				}));
			}
		}
		return messages;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(CassandraJournalAutoConfiguration.class)
	static class SecureApp {

		@Bean
		CassandraJournalOptionsCustomizer trustTheTestCa() {
			return SecureConnectionIT::trustTestCa;
		}

	}

	private static io.cassandrajournal.CassandraJournalOptions trustTestCa(
			io.cassandrajournal.CassandraJournalOptions options) {
		try {
			return options.withSslContext(trust());
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static SSLContext trust() throws Exception {
		KeyStore store = KeyStore.getInstance("JKS");
		try (InputStream in = Files.newInputStream(keys.resolve("trust.jks"))) {
			store.load(in, STORE_PASSWORD.toCharArray());
		}
		TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
		trust.init(store);
		SSLContext context = SSLContext.getInstance("TLS");
		context.init(null, trust.getTrustManagers(), null);
		return context;
	}

	/** A node key pair in {@code <name>.jks}, signed by the test CA, with the given subject alternative names. */
	private static void issue(String name, String san) throws Exception {
		String store = keys.resolve(name + ".jks").toString();
		keytool("-genkeypair", "-alias", "node", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + name,
				"-validity", "3", "-keystore", store);
		keytool("-certreq", "-alias", "node", "-file", keys.resolve(name + ".csr").toString(), "-keystore", store);
		keytool("-gencert", "-alias", "ca", "-infile", keys.resolve(name + ".csr").toString(), "-outfile",
				keys.resolve(name + ".pem").toString(), "-rfc", "-validity", "3", "-ext", san, "-keystore",
				keys.resolve("ca.jks").toString());
		keytool("-importcert", "-noprompt", "-alias", "ca", "-file", keys.resolve("ca.pem").toString(), "-keystore", store);
		keytool("-importcert", "-noprompt", "-alias", "node", "-file", keys.resolve(name + ".pem").toString(), "-keystore",
				store);
	}

	private static void keytool(String... arguments) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
		command.addAll(List.of(arguments));
		command.addAll(List.of("-storetype", "JKS", "-storepass", STORE_PASSWORD));
		if (List.of("-genkeypair", "-certreq", "-gencert").contains(arguments[0])) {
			command.addAll(List.of("-keypass", STORE_PASSWORD));
		}
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String out = new String(process.getInputStream().readAllBytes());
		if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
			throw new IllegalStateException("keytool " + String.join(" ", arguments) + " failed: " + out);
		}
	}

}
