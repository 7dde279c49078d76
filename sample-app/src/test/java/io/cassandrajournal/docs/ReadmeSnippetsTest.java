package io.cassandrajournal.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the README's code from drifting: every {@code ```java} and {@code ```yaml} block of README.md is preceded by
 * {@code <!-- snippet: name -->} and equals (whitespace aside) the region between {@code tag::name[]} and
 * {@code end::name[]} in this module's test sources or resources, which the build compiles (and
 * {@link QuickStartTest} / {@code PackagedApplicationIT} run). Every key of every YAML block must also be a
 * property that Spring Boot or the starter declares in its configuration metadata.
 */
class ReadmeSnippetsTest {

	private static final Path README = Path.of("..", "README.md");

	private static final List<Path> SOURCES = List.of(Path.of("src", "test", "java"), Path.of("src", "test", "resources"));

	private static final Pattern BLOCK = Pattern
		.compile("(?:<!-- snippet: ([\\w-]+) -->\\R)?```(java|yaml)\\R(.*?)\\R```", Pattern.DOTALL);

	@Test
	void everyJavaAndYamlBlockEqualsItsTaggedRegionInCodeTheBuildCompiles() throws IOException {
		String readme = Files.readString(README, StandardCharsets.UTF_8);
		List<String> problems = new ArrayList<>();
		int checked = check(readme, taggedRegions(), problems);
		assertThat(problems).isEmpty();
		assertThat(checked).as("README blocks checked").isGreaterThanOrEqualTo(6);
	}

	@Test
	void theCheckReportsABlockWithoutMarkerAndABlockThatDrifted() throws IOException {
		// the read-model snippet as it was before issue 19: two on(PersistentEvent<...>) with the same erasure
		String readme = """
				```java
				@Component
				class BalanceView {
				    @ProjectionHandler(name = "balances", tag = "account")
				    void on(PersistentEvent<Deposited> event) { }
				    void on(PersistentEvent<Withdrawn> event) { ... }
				}
				```

				<!-- snippet: quickstart-read-model -->
				```java
				class BalanceView { }
				```
				""";
		List<String> problems = new ArrayList<>();
		check(readme, taggedRegions(), problems);
		assertThat(problems).hasSize(2);
		assertThat(problems.get(0)).contains("line 1").contains("without a <!-- snippet: name --> line");
		assertThat(problems.get(1)).contains("line 10").contains("differs from tag::quickstart-read-model[]");
	}

	static int check(String readme, Map<String, String> regions, List<String> problems) {
		Matcher block = BLOCK.matcher(readme);
		int checked = 0;
		while (block.find()) {
			String name = block.group(1);
			String line = "README.md line " + (readme.substring(0, block.start()).lines().count() + 1);
			if (name == null) {
				problems.add(line + ": a ```" + block.group(2) + " block without a <!-- snippet: name --> line above it");
			}
			else if (!regions.containsKey(name)) {
				problems.add(line + ": no tag::" + name + "[] region under " + SOURCES);
			}
			else if (!normalize(block.group(3)).equals(normalize(regions.get(name)))) {
				problems.add(line + ": the block differs from tag::" + name + "[]:\n" + block.group(3)
						+ "\n--- tagged region ---\n" + regions.get(name));
			}
			else {
				checked++;
			}
		}
		return checked;
	}

	@Test
	void everyYamlKeyInTheReadmeIsADeclaredProperty() throws IOException {
		Set<String> declared = declaredProperties();
		assertThat(declared).contains("journal.cassandra.keyspace", "spring.cassandra.keyspace-name");
		String readme = Files.readString(README, StandardCharsets.UTF_8);
		Matcher block = BLOCK.matcher(readme);
		while (block.find()) {
			if (!block.group(2).equals("yaml")) {
				continue;
			}
			Map<String, Object> yaml = new Yaml().load(block.group(3));
			for (String key : flatten("", yaml)) {
				assertThat(declared).as("README yaml key %s", key).contains(key);
			}
		}
	}

	static Map<String, String> taggedRegions() throws IOException {
		Pattern start = Pattern.compile("(?://|#) tag::([\\w-]+)\\[]");
		Pattern end = Pattern.compile("(?://|#) end::([\\w-]+)\\[]");
		Map<String, StringBuilder> regions = new LinkedHashMap<>();
		for (Path root : SOURCES) {
			List<Path> files;
			try (Stream<Path> walk = Files.walk(root)) {
				files = walk.filter(Files::isRegularFile).sorted().toList();
			}
			for (Path file : files) {
				String open = null;
				for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
					Matcher s = start.matcher(line);
					Matcher e = end.matcher(line);
					if (s.find()) {
						open = s.group(1);
						regions.computeIfAbsent(open, (key) -> new StringBuilder());
					}
					else if (e.find()) {
						open = null;
					}
					else if (open != null) {
						regions.get(open).append(line).append('\n');
					}
				}
			}
		}
		Map<String, String> result = new LinkedHashMap<>();
		regions.forEach((name, text) -> result.put(name, text.toString()));
		return result;
	}

	static String normalize(String code) {
		return code.replaceAll("\\s+", " ").strip();
	}

	private static Set<String> declaredProperties() throws IOException {
		JsonMapper json = JsonMapper.builder().build();
		Set<String> names = new HashSet<>();
		Resource[] metadata = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:META-INF/spring-configuration-metadata.json");
		for (Resource resource : metadata) {
			JsonNode root = json.readTree(resource.getContentAsString(StandardCharsets.UTF_8));
			for (JsonNode property : root.path("properties")) {
				names.add(property.path("name").asString());
			}
		}
		return names;
	}

	@SuppressWarnings("unchecked")
	private static List<String> flatten(String prefix, Map<String, Object> map) {
		List<String> keys = new ArrayList<>();
		map.forEach((key, value) -> {
			String name = prefix.isEmpty() ? key : prefix + "." + key;
			if (value instanceof Map<?, ?> nested) {
				keys.addAll(flatten(name, (Map<String, Object>) nested));
			}
			else {
				keys.add(name);
			}
		});
		return keys;
	}

}
