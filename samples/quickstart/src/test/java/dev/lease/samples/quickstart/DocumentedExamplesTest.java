package dev.lease.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every excerpt the README and the pages of {@code docs/} mark with {@code <!-- from: path -->} is, line for line, in
 * the file it names, so the examples a reader copies are code the build compiles and its tests run.
 */
class DocumentedExamplesTest {

    @Test
    void everyMarkedExcerptIsInTheFileItNames() throws IOException {
        Path root = MarkdownBlocks.root();
        List<Path> documents = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(documents::add);
        }
        List<MarkdownBlocks.Block> excerpts = new ArrayList<>();
        for (Path document : documents) {
            MarkdownBlocks.of(document).stream().filter(b -> b.kind().equals("from")).forEach(excerpts::add);
        }
        assertThat(excerpts).as("excerpts marked <!-- from: ... --> in README.md and docs/").hasSizeGreaterThanOrEqualTo(3);
        for (MarkdownBlocks.Block excerpt : excerpts) {
            Path source = root.resolve(excerpt.path()).normalize();
            assertThat(source.startsWith(root)).as("%s names %s", excerpt.document(), excerpt.path()).isTrue();
            assertThat(source).as("%s names %s", root.relativize(excerpt.document()), excerpt.path()).isRegularFile();
            List<String> lines = Files.readAllLines(source).stream().map(String::stripTrailing).toList();
            List<String> wanted = excerpt.lines().stream().map(String::stripTrailing).toList();
            assertThat(Collections.indexOfSubList(lines, wanted))
                    .as("the excerpt in %s is not, line for line, in %s:%n%s", root.relativize(excerpt.document()),
                            excerpt.path(), excerpt.text())
                    .isNotNegative();
        }
    }
}
