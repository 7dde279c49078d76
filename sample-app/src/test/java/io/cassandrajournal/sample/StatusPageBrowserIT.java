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
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Opens the status page in headless Chromium (Debian's {@code chromium} package) after the load generator ran,
 * checks that it renders the real projections and that data (an account id that is markup) is shown as text and
 * runs no script, and saves a screenshot to {@code target/status-page.png}. Part of {@code ./mvnw verify}: skipped
 * (and reported as skipped) where Chromium is missing, except under CI ({@code CI} set), where {@code .ci/run}
 * installs it and a missing browser fails.
 */
@Tag("browser")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "journal.cassandra.embedded.port=0", "journal.cassandra.embedded.temporary=true",
				"journal.cassandra.embedded.max-heap=512m" })
class StatusPageBrowserIT {

	private static final Path CHROMIUM = findChromium();

	/** Debian's chromium, wherever PATH puts it ({@code .ci/run} installs it when {@code command -v chromium} finds none). */
	private static Path findChromium() {
		for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
			if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "chromium"))) {
				return Path.of(dir, "chromium");
			}
		}
		return Path.of("/usr/bin/chromium");
	}

	@LocalServerPort
	private int port;

	@Test
	void statusPageShowsTheRunningProjectionsAndRendersDataAsText() throws Exception {
		Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) || System.getenv("CI") != null,
				"Debian's chromium package is not installed (apt-get install chromium); .ci/run installs it");
		assertThat(CHROMIUM).as("Debian's chromium package (apt-get install chromium)").isExecutable();
		HttpClient http = HttpClient.newHttpClient();
		HttpResponse<String> started = http.send(HttpRequest.newBuilder(uri("/load"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"accounts\": 20, \"operations\": 1500, \"concurrency\": 8}"))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(started.statusCode()).as(started.body()).isIn(202, 409);
		// An account whose id is markup: the status page shows persistenceIds (in the cursor) and must show this one
		// as text. If it were parsed as HTML, the image's error handler would mark the body.
		String markup = "<img src=x onerror=\"document.body.setAttribute('data-x'+'ss','ran')\">";
		String encoded = java.net.URLEncoder.encode(markup, StandardCharsets.UTF_8).replace("+", "%20");
		await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
			.until(() -> http.send(HttpRequest.newBuilder(uri("/load")).GET().build(), HttpResponse.BodyHandlers.ofString())
				.body()
				.contains("\"COMPLETED\""));
		assertThat(http.send(HttpRequest.newBuilder(uri("/accounts/" + encoded)).POST(HttpRequest.BodyPublishers.noBody()).build(),
				HttpResponse.BodyHandlers.ofString()).statusCode()).isIn(201, 409);
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
			.until(() -> http.send(HttpRequest.newBuilder(uri("/actuator/projections")).GET().build(),
					HttpResponse.BodyHandlers.ofString()).body().contains("onerror"));
		String url = "http://localhost:" + this.port + "/status.html";
		String dom = chromium("--dump-dom", url);
		assertThat(dom).contains("balances", "statements", "RUNNING", "account");
		assertThat(dom).as("the markup account is shown as text").contains("&lt;img src=x onerror=");
		assertThat(dom).as("no script from data ran").doesNotContain("data-xss=");
		Path screenshot = Path.of("target", "status-page.png").toAbsolutePath();
		chromium("--screenshot=" + screenshot, url);
		assertThat(Files.size(screenshot)).as("a real picture").isGreaterThan(20_000);
	}

	private URI uri(String path) {
		return URI.create("http://localhost:" + this.port + path);
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
