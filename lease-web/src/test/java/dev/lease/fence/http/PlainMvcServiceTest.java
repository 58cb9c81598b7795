package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.web.client.RestClient;

import dev.lease.testing.TestTiming;

/**
 * A plain MVC service (the starter, Spring MVC, nothing that brings spring-tx) starts and fences requests: run in a
 * child JVM whose class path really lacks spring-tx and what needs it, so the JVM cannot link a class naming a
 * spring-tx type (a {@code FilteredClassLoader} only hides classes from Spring's own checks).
 */
class PlainMvcServiceTest {

    /** spring-tx and every jar of the test class path that depends on it. */
    private static final Pattern NEEDS_TX = Pattern.compile(
            "[/\\\\](spring-tx|spring-jdbc|spring-r2dbc|spring-orm|spring-boot-jdbc|spring-boot-starter-jdbc"
                    + "|spring-boot-transaction|spring-boot-r2dbc|spring-data-[^/\\\\]+)[/\\\\]");

    @Test
    void aPlainMvcServiceWithoutSpringTxStartsAndFences() throws Exception {
        List<String> classPath = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!NEEDS_TX.matcher(entry).find()) {
                classPath.add(entry);
            }
        }
        assertThat(classPath).noneMatch(PlainMvcServiceTest::holdsSpringTx);
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", String.join(File.pathSeparator, classPath),
                PlainMvcService.class.getName()).redirectErrorStream(true).start();
        try {
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            StringBuilder output = new StringBuilder();
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(
                        new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        synchronized (output) {
                            output.append(line).append('\n');
                        }
                        if (line.startsWith("STARTED ")) {
                            lines.add(line);
                        }
                    }
                }
                catch (IOException ended) {
                    // the child is gone; its output so far is in the failure message
                }
                lines.add("EXITED");
            }, "plain-mvc-output");
            reader.setDaemon(true);
            reader.start();
            String started = lines.poll(TestTiming.seconds(90).toMillis(), TimeUnit.MILLISECONDS);
            synchronized (output) {
                assertThat(started).as("the child's start; its output:\n%s", output).startsWith("STARTED ");
            }
            String[] words = started.split(" ");
            assertThat(words[2]).isEqualTo("spring-tx=false");
            RestClient client = RestClient.create("http://127.0.0.1:" + words[1]);
            assertThat(client.get().uri("/hello").retrieve().body(String.class)).isEqualTo("hello");
            assertThat(client.post().uri("/notes/1").header(FencingTokenHeader.NAME, "8;lease=\"notes\"").retrieve()
                    .body(String.class)).isEqualTo("written 1");
            assertThatThrownBy(() -> client.post().uri("/notes/1").header(FencingTokenHeader.NAME, "7;lease=\"notes\"")
                    .retrieve().toBodilessEntity())
                    .satisfies(e -> assertThat(HttpStatuses.of(e).status()).isEqualTo(409));
            assertThatThrownBy(() -> client.post().uri("/notes/1").retrieve().toBodilessEntity())
                    .satisfies(e -> assertThat(HttpStatuses.of(e).status()).isEqualTo(428));
        }
        finally {
            child.getOutputStream().close();
            if (!child.waitFor(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)) {
                child.destroyForcibly();
            }
        }
    }

    private static boolean holdsSpringTx(String entry) {
        Path path = Path.of(entry);
        try {
            if (Files.isDirectory(path)) {
                return Files.isDirectory(path.resolve("org/springframework/transaction"));
            }
            if (!Files.isRegularFile(path)) {
                return false;
            }
            try (JarFile jar = new JarFile(path.toFile()); Stream<String> names = jar.stream().map(e -> e.getName())) {
                return names.anyMatch(n -> n.startsWith("org/springframework/transaction/"));
            }
        }
        catch (IOException unreadable) {
            throw new IllegalStateException("cannot read " + entry, unreadable);
        }
    }
}
