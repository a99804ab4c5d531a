"""The same short note in several languages, for the tests of language detection and what depends
on it (tags, the graph's gate, the search filter, the pages)."""

from __future__ import annotations

GERMAN = (
    "Die Datenbank wurde gestern auf den neuen Server umgezogen. Danach haben wir die Indexe neu "
    "aufgebaut, und die Abfragen sind jetzt deutlich schneller als vorher."
)
ENGLISH = (
    "We moved the database to the new server yesterday. Afterwards we rebuilt the indexes, and the "
    "queries are now noticeably faster than before."
)
FRENCH = (
    "Nous avons déplacé la base de données vers le nouveau serveur hier. Ensuite, nous avons reconstruit "
    "les index, et les requêtes sont maintenant nettement plus rapides qu'avant."
)
RUSSIAN = "Вчера мы перенесли базу данных на новый сервер, а затем перестроили индексы для поиска."
JAPANESE = "昨日、データベースを新しいサーバーに移しました。その後、索引を作り直しました。" * 3
