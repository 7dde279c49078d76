package io.cassandrajournal.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Opens the status page in headless Chromium (Debian's {@code chromium} package) while the load generator
 * runs, checks that it renders the real projections, and saves a screenshot to
 * {@code target/status-page.png}. Runs only with {@code -Pbrowser-tests}.
 */
@Tag("browser")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "journal.cassandra.embedded.port=0", "journal.cassandra.embedded.temporary=true",
				"journal.cassandra.embedded.max-heap=512m" })
class StatusPageBrowserIT {

	private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

	@LocalServerPort
	private int port;

	@Test
	void statusPageShowsTheRunningProjections() throws Exception {
		assertThat(CHROMIUM).as("Debian's chromium package (apt-get install chromium)").isExecutable();
		HttpClient http = HttpClient.newHttpClient();
		Thread load = new Thread(() -> {
			try {
				http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/load"))
					.header("Content-Type", "application/json")
					.POST(HttpRequest.BodyPublishers.ofString("{\"accounts\": 20, \"operations\": 1500, \"concurrency\": 8}"))
					.build(), HttpResponse.BodyHandlers.ofString());
			}
			catch (IOException | InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});
		load.start();
		Thread.sleep(6000); // let the charts collect a few samples while the load runs
		String url = "http://localhost:" + this.port + "/status.html";
		String dom = chromium("--dump-dom", url);
		assertThat(dom).contains("balances", "statements", "RUNNING", "account");
		Path screenshot = Path.of("target", "status-page.png").toAbsolutePath();
		chromium("--screenshot=" + screenshot, url);
		assertThat(Files.size(screenshot)).as("a real picture").isGreaterThan(20_000);
		load.join(TimeUnit.MINUTES.toMillis(3));
	}

	private static String chromium(String mode, String url) throws Exception {
		Path profile = Files.createTempDirectory("chromium-profile");
		List<String> command = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
				"--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
				"--disable-sync", "--hide-scrollbars", "--user-data-dir=" + profile, "--window-size=1400,900",
				"--virtual-time-budget=30000", mode, url));
		Process process = new ProcessBuilder(command).redirectErrorStream(false).start();
		byte[] out = process.getInputStream().readAllBytes();
		assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
		return new String(out, StandardCharsets.UTF_8);
	}

}
