package io.cassandrajournal.sample;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample as Spring Boot packages it ({@code target/sample-app-*.jar}, built by {@code package} before the
 * integration tests run): Cassandra's jars are not inside it, and {@code java -jar} with the embedded node on
 * starts a node (whose jars come from the local Maven repository) and reports health UP, configured by the
 * README's {@code application.yml} for an application on the embedded node.
 */
class PackagedApplicationIT {

	static final Path README_YAML = Path.of("src/test/resources/readme/embedded-application.yml");

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	@Test
	void cassandraJarsAreNotPackagedOnlyTheJdkOnlyLauncher() throws IOException {
		List<String> libs = new ArrayList<>();
		try (ZipFile jar = new ZipFile(packagedJar().toFile())) {
			jar.stream()
				.map(ZipEntry::getName)
				.filter((name) -> name.startsWith("BOOT-INF/lib/"))
				.map((name) -> name.substring("BOOT-INF/lib/".length()))
				.forEach(libs::add);
		}
		assertThat(libs).anySatisfy((lib) -> assertThat(lib).startsWith("cassandra-launcher-"));
		assertThat(libs).noneSatisfy((lib) -> assertThat(lib).startsWith("cassandra-all-"));
		// jars that only Cassandra's server brings
		assertThat(libs).noneSatisfy((lib) -> assertThat(lib).startsWith("jamm-"));
		assertThat(libs).noneSatisfy((lib) -> assertThat(lib).startsWith("high-scale-lib-"));
		assertThat(libs).noneSatisfy((lib) -> assertThat(lib).startsWith("ohc-core-"));
		assertThat(libs).noneSatisfy((lib) -> assertThat(lib).startsWith("chronicle-queue-"));
	}

	@Test
	void javaDashJarStartsTheEmbeddedNodeAndReportsHealthUp(@TempDir Path work) throws Exception {
		int httpPort = freePort();
		int cqlPort = freePort();
		Path log = work.resolve("app.log");
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx384m"));
		String repo = System.getProperty("maven.repo.local");
		if (repo != null) {
			command.add("-Dmaven.repo.local=" + repo);
		}
		command.addAll(List.of("-jar", packagedJar().toString(), "--server.port=" + httpPort,
				// the README's application.yml for one's own application on the embedded node
				"--spring.config.additional-location=" + README_YAML.toAbsolutePath(),
				"--journal.cassandra.embedded.enabled=true", "--journal.cassandra.embedded.port=" + cqlPort,
				"--journal.cassandra.embedded.temporary=true", "--journal.cassandra.embedded.max-heap=512m"));
		Process app = new ProcessBuilder(command).directory(work.toFile())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		try {
			// Bound: the node takes 10-60 s on a busy 2-core machine, the application a few seconds more.
			await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
				if (!app.isAlive()) {
					// not an AssertionError: Awaitility stops waiting at once
					throw new IllegalStateException("The application exited; its output:\n" + tail(log));
				}
				assertThat(health(httpPort)).as("health").startsWith("200 ").contains("\"status\":\"UP\"");
			});
			assertThat(Files.readString(log)).contains("Started an embedded Cassandra node on 127.0.0.1:" + cqlPort);
		}
		finally {
			app.destroy();
			if (!app.waitFor(90, TimeUnit.SECONDS)) {
				app.destroyForcibly();
			}
		}
		assertThat(app.exitValue()).as("exit code after SIGTERM; output:\n%s", tail(log)).isIn(0, 143);
	}

	private String health(int port) {
		try {
			HttpResponse<String> response = this.client.send(HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
				.timeout(Duration.ofSeconds(5))
				.build(), HttpResponse.BodyHandlers.ofString());
			return response.statusCode() + " " + response.body();
		}
		catch (IOException ex) {
			return "not answering: " + ex;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "interrupted";
		}
	}

	static Path packagedJar() throws IOException {
		try (DirectoryStream<Path> jars = Files.newDirectoryStream(Path.of("target"), "sample-app-*.jar")) {
			for (Path jar : jars) {
				return jar.toAbsolutePath();
			}
		}
		throw new IllegalStateException("No target/sample-app-*.jar: run the integration tests through Maven "
				+ "(verify), which packages the application first");
	}

	private static String tail(Path log) throws IOException {
		if (!Files.exists(log)) {
			return "(no output)";
		}
		List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
		return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
			return socket.getLocalPort();
		}
	}

}
