<?php
use PHPUnit\Framework\TestCase;

final class SyntaxTest extends TestCase
{
    public function testX(): void
    {
        $this->assertTrue(true)
    }
}
