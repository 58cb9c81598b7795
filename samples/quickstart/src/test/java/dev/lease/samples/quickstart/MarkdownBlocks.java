package dev.lease.samples.quickstart;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The code blocks of the project's Markdown that claim where they come from: {@code <!-- file: path -->} on the line
 * before a fenced block (a file a reader copies into a project of their own) or {@code <!-- from: path -->} (an excerpt
 * of a file of this repository, which the build compiles).
 */
final class MarkdownBlocks {

    /** One marked block: the document it is in, its marker kind and path, and its lines. */
    record Block(Path document, String kind, String path, List<String> lines) {

        String text() {
            return String.join("\n", lines) + "\n";
        }
    }

    private static final Pattern MARKER = Pattern.compile("^<!-- (file|from): (\\S+) -->$");

    private MarkdownBlocks() {
    }

    /** The repository's root: the closest directory above the working one that holds {@code mvnw} and the README. */
    static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve("mvnw")) && Files.exists(dir.resolve("README.md"))
                    && Files.isDirectory(dir.resolve("docs"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root (mvnw, README.md, docs/) above " + Path.of("").toAbsolutePath());
    }

    static List<Block> of(Path document) throws IOException {
        List<String> lines = Files.readAllLines(document);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher marker = MARKER.matcher(lines.get(i).strip());
            if (!marker.matches()) {
                continue;
            }
            if (i + 1 >= lines.size() || !lines.get(i + 1).startsWith("```")) {
                throw new IllegalStateException(document + ":" + (i + 1) + ": " + lines.get(i)
                        + " must be followed at once by a fenced code block");
            }
            int end = i + 2;
            while (end < lines.size() && !lines.get(end).startsWith("```")) {
                end++;
            }
            if (end == lines.size()) {
                throw new IllegalStateException(document + ":" + (i + 2) + ": code block never closed");
            }
            blocks.add(new Block(document, marker.group(1), marker.group(2), List.copyOf(lines.subList(i + 2, end))));
            i = end;
        }
        return blocks;
    }
}
