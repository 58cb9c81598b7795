package dev.lease.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/** Issue 44: every sample says how to run it, with the command that runs it from the project's root. */
class SampleReadmesTest {

    @Test
    void everySampleHasAReadmeWithItsRunCommand() throws IOException {
        Path samples = Path.of("..").toAbsolutePath().normalize();
        List<Path> modules;
        try (Stream<Path> dirs = Files.list(samples)) {
            modules = dirs.filter(dir -> Files.isRegularFile(dir.resolve("pom.xml"))).sorted().toList();
        }
        assertThat(modules).as("the samples").hasSizeGreaterThanOrEqualTo(6);
        assertThat(modules).allSatisfy(module -> {
            Path readme = module.resolve("README.md");
            assertThat(readme).as("README of " + module.getFileName()).isRegularFile();
            assertThat(Files.readString(readme)).as(readme.toString())
                    .contains("./mvnw -q -pl samples/" + module.getFileName() + " -am spring-boot:run");
        });
    }
}
